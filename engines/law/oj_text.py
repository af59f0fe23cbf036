"""Article text quoted from the Official Journal: Regulation (EU) 2024/2847 (Cyber Resilience Act),
OJ L, 2024/2847, 20.11.2024, CELEX 32024R2847, English version, Annex I and Annex VII.

These strings are quotes, not our words: the panel shows them in quotation marks with their point
as the citation, beside our plain-words summaries (engines.law.annex). Each is one point of the
annex as published, with its closing ";" or "." left off. EU legislative texts may be reused
(Commission Decision 2011/833/EU); the Official Journal's printed edition is the authentic one.
"""
from __future__ import annotations

SOURCE = "Regulation (EU) 2024/2847, OJ L, 2024/2847, 20.11.2024 (CELEX 32024R2847)"

#: The words that open each part of Annex I and govern every point under them.
ANNEX_I_LEAD = {
    "I.1": "",
    "I.2": "On the basis of the cybersecurity risk assessment referred to in Article 13(2) and where applicable, "
           "products with digital elements shall:",
    "II": "Manufacturers of products with digital elements shall:",
}

#: Annex I, point by point (item ids as in engines.law.annex).
ANNEX_I = {
    "I.1": "Products with digital elements shall be designed, developed and produced in such a way that they ensure "
           "an appropriate level of cybersecurity based on the risks",
    "I.2.a": "be made available on the market without known exploitable vulnerabilities",
    "I.2.b": "be made available on the market with a secure by default configuration, unless otherwise agreed "
             "between manufacturer and business user in relation to a tailor-made product with digital elements, "
             "including the possibility to reset the product to its original state",
    "I.2.c": "ensure that vulnerabilities can be addressed through security updates, including, where applicable, "
             "through automatic security updates that are installed within an appropriate timeframe enabled as a "
             "default setting, with a clear and easy-to-use opt-out mechanism, through the notification of "
             "available updates to users, and the option to temporarily postpone them",
    "I.2.d": "ensure protection from unauthorised access by appropriate control mechanisms, including but not "
             "limited to authentication, identity or access management systems, and report on possible "
             "unauthorised access",
    "I.2.e": "protect the confidentiality of stored, transmitted or otherwise processed data, personal or other, "
             "such as by encrypting relevant data at rest or in transit by state of the art mechanisms, and by "
             "using other technical means",
    "I.2.f": "protect the integrity of stored, transmitted or otherwise processed data, personal or other, "
             "commands, programs and configuration against any manipulation or modification not authorised by "
             "the user, and report on corruptions",
    "I.2.g": "process only data, personal or other, that are adequate, relevant and limited to what is necessary "
             "in relation to the intended purpose of the product with digital elements (data minimisation)",
    "I.2.h": "protect the availability of essential and basic functions, also after an incident, including "
             "through resilience and mitigation measures against denial-of-service attacks",
    "I.2.i": "minimise the negative impact by the products themselves or connected devices on the availability "
             "of services provided by other devices or networks",
    "I.2.j": "be designed, developed and produced to limit attack surfaces, including external interfaces",
    "I.2.k": "be designed, developed and produced to reduce the impact of an incident using appropriate "
             "exploitation mitigation mechanisms and techniques",
    "I.2.l": "provide security related information by recording and monitoring relevant internal activity, "
             "including the access to or modification of data, services or functions, with an opt-out "
             "mechanism for the user",
    "I.2.m": "provide the possibility for users to securely and easily remove on a permanent basis all data and "
             "settings and, where such data can be transferred to other products or systems, ensure that this "
             "is done in a secure manner",
    "II.1": "identify and document vulnerabilities and components contained in products with digital elements, "
            "including by drawing up a software bill of materials in a commonly used and machine-readable "
            "format covering at the very least the top-level dependencies of the products",
    "II.2": "in relation to the risks posed to products with digital elements, address and remediate "
            "vulnerabilities without delay, including by providing security updates; where technically "
            "feasible, new security updates shall be provided separately from functionality updates",
    "II.3": "apply effective and regular tests and reviews of the security of the product with digital elements",
    "II.4": "once a security update has been made available, share and publicly disclose information about "
            "fixed vulnerabilities, including a description of the vulnerabilities, information allowing users "
            "to identify the product with digital elements affected, the impacts of the vulnerabilities, their "
            "severity and clear and accessible information helping users to remediate the vulnerabilities; in "
            "duly justified cases, where manufacturers consider the security risks of publication to outweigh "
            "the security benefits, they may delay making public information regarding a fixed vulnerability "
            "until after users have been given the possibility to apply the relevant patch",
    "II.5": "put in place and enforce a policy on coordinated vulnerability disclosure",
    "II.6": "take measures to facilitate the sharing of information about potential vulnerabilities in their "
            "product with digital elements as well as in third-party components contained in that product, "
            "including by providing a contact address for the reporting of the vulnerabilities discovered in "
            "the product with digital elements",
    "II.7": "provide for mechanisms to securely distribute updates for products with digital elements to ensure "
            "that vulnerabilities are fixed or mitigated in a timely manner and, where applicable for security "
            "updates, in an automatic manner",
    "II.8": "ensure that, where security updates are available to address identified security issues, they are "
            "disseminated without delay and, unless otherwise agreed between a manufacturer and a business user "
            "in relation to a tailor-made product with digital elements, free of charge, accompanied by "
            "advisory messages providing users with the relevant information, including on potential action "
            "to be taken",
}

ANNEX_VII_LEAD = ("The technical documentation referred to in Article 31 shall contain at least the following "
                  "information, as applicable to the relevant product with digital elements:")

#: Annex VII, point by point (the points of engines.law.annex_vii); point 5 is quoted in its first sentence.
ANNEX_VII = {
    "1": "a general description of the product with digital elements, including: (a) its intended purpose; "
         "(b) versions of software affecting compliance with essential cybersecurity requirements; (c) where the "
         "product with digital elements is a hardware product, photographs or illustrations showing external "
         "features, marking and internal layout; (d) user information and instructions as set out in Annex II",
    "2(a)": "necessary information on the design and development of the product with digital elements, "
            "including, where applicable, drawings and schemes and a description of the system architecture "
            "explaining how software components build on or feed into each other and integrate into the overall "
            "processing",
    "2(b)": "necessary information and specifications of the vulnerability handling processes put in place by the "
            "manufacturer, including the software bill of materials, the coordinated vulnerability disclosure "
            "policy, evidence of the provision of a contact address for the reporting of the vulnerabilities and "
            "a description of the technical solutions chosen for the secure distribution of updates",
    "2(c)": "necessary information and specifications of the production and monitoring processes of the product "
            "with digital elements and the validation of those processes",
    "3": "an assessment of the cybersecurity risks against which the product with digital elements is designed, "
         "developed, produced, delivered and maintained pursuant to Article 13, including how the essential "
         "cybersecurity requirements set out in Part I of Annex I are applicable",
    "4": "relevant information that was taken into account to determine the support period pursuant to Article "
         "13(8) of the product with digital elements",
    "5": "a list of the harmonised standards applied in full or in part the references of which have been "
         "published in the Official Journal of the European Union, common specifications as set out in Article "
         "27 of this Regulation or European cybersecurity certification schemes adopted pursuant to Regulation "
         "(EU) 2019/881 pursuant to Article 27(8) of this Regulation, and, where those harmonised standards, "
         "common specifications or European cybersecurity certification schemes have not been applied, "
         "descriptions of the solutions adopted to meet the essential cybersecurity requirements set out in "
         "Parts I and II of Annex I, including a list of other relevant technical specifications applied",
    "6": "reports of the tests carried out to verify the conformity of the product with digital elements and of "
         "the vulnerability handling processes with the applicable essential cybersecurity requirements as set "
         "out in Parts I and II of Annex I",
    "7": "a copy of the EU declaration of conformity",
    "8": "where applicable, the software bill of materials, further to a reasoned request from a market "
         "surveillance authority provided that it is necessary in order for that authority to be able to check "
         "compliance with the essential cybersecurity requirements set out in Annex I",
}


def annex_i_quote(item_id: str) -> str:
    """The OJ text of one Annex I item, with the lead-in that governs it, ready to show as a quote."""
    lead = ANNEX_I_LEAD["II" if item_id.startswith("II") else item_id[:3]]
    return (lead + " … " if lead else "") + ANNEX_I[item_id]
