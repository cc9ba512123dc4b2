"""A search's status codes and registers: one ``int64`` array, so a compiled search can stop and resume."""

# Search status codes (regs[R_STATUS]).
RUNNING, WON, EXHAUSTED, MEMORY = 0, 1, 2, 3
# Registers of a search: depth, positions searched, positions stored, status, whether the depth limit
# cut a line, most foundation cards reached, whether it has started, whether it left a legal move out.
R_DEPTH, R_NODES, R_STORED, R_STATUS, R_DEPTH_HIT, R_BEST, R_STARTED, R_PRUNED = range(8)
N_REGS = 8

__all__ = ["EXHAUSTED", "MEMORY", "N_REGS", "RUNNING", "R_BEST", "R_DEPTH", "R_DEPTH_HIT", "R_NODES", "R_PRUNED",
           "R_STARTED", "R_STATUS", "R_STORED", "WON"]
