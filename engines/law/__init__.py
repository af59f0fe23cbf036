"""EU law as explained rules: the Cyber Resilience Act (Reg. (EU) 2024/2847) and the Product
Liability Directive (Dir. (EU) 2024/2853).

``cra`` and ``pld`` implement the article rules as plain functions (scope, tier, routes, clocks,
liable operators, damage heads); ``trees`` loads the question trees shipped in ``assets/law/``
into networkx, validates them and walks them; ``record`` turns a walk into a decision record;
``outcome`` reads a walk with the rule engines; ``clocks`` computes the deadline clocks of the
panel's ``Params`` (``params``). Educational, not legal advice.
"""
from engines.law.params import Params

__all__ = ["Params"]
