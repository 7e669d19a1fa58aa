"""Does training fail without the factor? What this build measured, as the tuning page prints
it under its plane's table: the recall head without the factor against the 1/sqrt(d_k)
default, each rule at its own best shared rate (the same runs, read from the store).
"""

from sdpa.sizes import sizes
from sdpa.tuning import unscaled_reading

result = unscaled_reading(sizes().plane)
print(result)
