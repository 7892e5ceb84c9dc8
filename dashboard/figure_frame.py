"""What the figures the dashboard draws as HTML share (the histograms, the severity curves, the comparison of two
metrics, the correlation table): how they print a number and the style of their frame. No Streamlit here."""
from __future__ import annotations


def number(value: float) -> str:
    """A tick, an edge or a margin as a figure prints it: three significant digits."""
    return f"{value:.3g}"


def frame_css(root: str, plot_height_px: int = 0) -> str:
    """The rules of a figure whose element has the class ``root``: its text, its title (class ``<root>-title``)
    and parts' titles, the key, and the frame of a plot (y labels beside the plot area, ``plot_height_px`` tall,
    and the axis title below); a figure adds its marks' own rules."""
    r = f".{root}"
    return f"""
{r} {{ font-size: 0.8rem; margin: 0.2rem 0 0.6rem 0; }}
{r} {r}-title {{ font-size: 0.95rem; font-weight: 600; margin: 0 0 0.3rem 0; }}
{r} .mutt-part-title {{ font-weight: 600; margin: 0.5rem 0 0.2rem 0; }}
{r} .mutt-key {{ display: flex; flex-wrap: wrap; gap: 0.2rem 1rem; margin-bottom: 0.3rem; }}
{r} .mutt-frame {{ display: flex; gap: 0.4rem; }}
{r} .mutt-y {{ display: flex; flex-direction: column; justify-content: space-between; text-align: right;
  font-variant-numeric: tabular-nums; opacity: 0.75; height: {plot_height_px}px; }}
{r} .mutt-area {{ flex: 1; min-width: 0; }}
{r} .mutt-plot {{ position: relative; height: {plot_height_px}px; border-bottom: 1px solid #9ca3af; }}
{r} .mutt-axis {{ text-align: center; opacity: 0.75; }}
{r} .mutt-scroll {{ overflow-x: auto; max-width: 100%; }}
{r} table {{ border-collapse: separate; border-spacing: 2px; }}
{r} th {{ font-weight: 500; padding: 0.2rem 0.5rem; white-space: nowrap; }}
{r} thead th {{ text-align: center; }}
{r} tbody th {{ text-align: right; }}
"""
