"Small statistics shared by the bench scripts: a mean with its 95% t interval, and a proportion with its Wilson interval."
import math
import numpy as np
from scipy import stats

def mean_ci(xs, confidence:float=0.95)->tuple:
    "`(mean, low, high)` of `xs` with Student's t interval (NaN ends for fewer than 2 values)."
    xs = np.asarray([x for x in xs if x == x], float)
    m = float(xs.mean()) if len(xs) else float('nan')
    if len(xs) < 2: return m, float('nan'), float('nan')
    h = stats.t.ppf((1 + confidence) / 2, len(xs) - 1) * xs.std(ddof=1) / math.sqrt(len(xs))
    return m, m - h, m + h

def wilson(k:int, n:int, confidence:float=0.95)->tuple:
    "`(share, low, high)`: k successes of n, with the Wilson score interval."
    if not n: return float('nan'), float('nan'), float('nan')
    z = stats.norm.ppf((1 + confidence) / 2); p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n); h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return p, max(0.0, c - h), min(1.0, c + h)

def show(m, lo, hi, fmt='.2f', unit='')->str:
    "`m [lo, hi]unit`."
    return f"{m:{fmt}}{unit} [95% CI {lo:{fmt}}, {hi:{fmt}}]{unit}" if hi == hi else f"{m:{fmt}}{unit} (one value: no interval)"
