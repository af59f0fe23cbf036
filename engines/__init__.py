"""Pure computation behind every panel: numpy, torch (imported lazily), networkx; never Qt."""
