"""A grid run under a progress bar and a Cancel button, both drawn before anything is read or loaded: the Run
page's and the Your sentences page's runs."""
from __future__ import annotations

from typing import Callable

import streamlit as st

from muttlab.dashboard import services, ui
from muttlab.errors import MuttlabError


def run_with_progress(settings, selection: services.Selection, suite_name: str, on_cancel: Callable[[], None],
                      key: str):
    """``services.run_grid`` under a progress bar fed by the runner's phases (loading a metric, scoring n of N
    items, time left), with a Cancel button (``key``) whose click calls ``on_cancel`` and starts the rerun that
    stops the run. Returns the Results, or None after showing why the run failed."""
    # A placeholder, not a bare container: emptying a container adds an empty element inside it and leaves the
    # bar and Cancel on the page.
    holder = st.empty()
    box = holder.container(border=True)
    bar = box.progress(0.0, text=f"preparing the run: reading the trials, then loading {len(selection.metrics)} "
                                 "metric" + ("s" if len(selection.metrics) != 1 else ""))
    box.button("Cancel", icon=":material/stop:", key=key, on_click=on_cancel)

    def progress(step: int, total: int, message: str) -> None:
        bar.progress(min(1.0, step / total) if total else 1.0, text=message)

    try:
        return services.run_grid(settings, selection, progress=progress, suite_name=suite_name)
    except services.DemoLimit as exc:
        ui.demo_limit(exc)
        return None
    except MuttlabError as exc:
        st.error(f"The run failed: {ui.md_text(exc)}")
        return None
    finally:
        holder.empty()
