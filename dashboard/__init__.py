"""The MUTT Lab dashboard: a Streamlit multipage app (``muttlab serve``).

``app.py`` only declares the pages; each page in ``views/`` reads its widgets, asks the engine through
the cached helpers of ``services.py`` and draws with ``charts.py``. No score is computed here.
"""
