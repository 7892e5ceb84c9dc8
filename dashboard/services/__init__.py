"""What the dashboard's pages call: the doorway to the engine, by concern.

* :mod:`.core`: settings, the shared registry and suites, the fair queue's door, what the server keeps of what
  was asked (``memoised``, in the dashboard's one process cache, :mod:`muttlab.dashboard.shared`) and the figures
  of what it keeps (``kept_figure``), the Playground's scoring, the pair store, published numbers, severity curves;
* :mod:`.budget`: the public demo's share per visitor and cap for the whole server;
* :mod:`.grid`: grid runs, the engine's run with the fair queue as its executor;
* :mod:`.cells`: one Drill-down cell's trials, whatever the suite, their slices, and which of them are pairs of the
  store;
* :mod:`.warmup`: the background warm-up;
* :mod:`.uploads`: challenge-set files within the size limits, the uploads links name, and their scoring;
* :mod:`.paired`: McNemar's test of two metrics on one cell;
* :mod:`.user_suites`: suites built from visitors' own sentences, their caps and their ``mine:<id>`` names
  (the Your sentences page uses the module itself);
* :mod:`.studies`: the human-judgment studies as they ship, and whether they are current here;
* :mod:`.playground`: the Playground's scores, kept by what was scored, and whether a form was scored.

Everything shipped precomputed (the grid, the studies, the published numbers, the default Severity curve) is a
snapshot of the API (``services.shipped(kind)``), current here when ``services.shipped_differences`` is empty.

Pages use the names below as ``services.<name>``.
"""
from muttlab.dashboard.services.core import (DEFAULT_METRICS, LEARNED_METRICS, SUITES, apart, available_metrics,
                                             catalogue_frame, corrupt_sentence, corruption_label, corruption_labels,
                                             facts, finished_reproduction, generator_types, is_memoised, kept_figure,
                                             memoised, metric_catalogue, shipped, shipped_differences,
                                             shipped_reproduction, queued, queued_study, registry, report_frame,
                                             reproduction, reval_evaluation, score_sentences, session_id, settings,
                                             severity, severity_key, shipped_grid, shipped_grid_html, snapshot_key,
                                             still_wanted, store, store_revision, study_warnings, suite, suite_named,
                                             trials_by_id)
from muttlab.dashboard.services.budget import (DemoLimit, current_visitor, governs, is_quick, scoring_settings,
                                               slow_metrics)
from muttlab.dashboard.services.grid import Selection, cell_cached, finished_run, run_grid
from muttlab.dashboard.services.paired import paired_comparison
from muttlab.dashboard.services.uploads import challenge, challenge_key, read_challenge, remember_upload
from muttlab.dashboard.services.warmup import WarmState, warm_start
from muttlab.dashboard.services.cells import cell_slices, cell_trials, challenge_file, held, pair_ids, parse_slice
from muttlab.dashboard.services.studies import published_titles, shipped_studies, shipped_studies_current
from muttlab.dashboard.services.playground import playground_judged, playground_scored, playground_scores

__all__ = ["DEFAULT_METRICS", "DemoLimit", "LEARNED_METRICS", "SUITES", "Selection", "apart",
           "WarmState", "available_metrics", "catalogue_frame", "cell_cached", "challenge", "challenge_key",
           "corrupt_sentence", "corruption_label", "corruption_labels", "facts", "finished_reproduction", "finished_run",
           "generator_types", "governs", "is_memoised", "is_quick",
           "memoised", "metric_catalogue", "paired_comparison", "queued", "queued_study",
           "read_challenge",
           "registry", "report_frame", "reproduction", "reval_evaluation", "run_grid",
           "score_sentences", "scoring_settings", "session_id", "settings", "severity", "severity_key", "shipped",
           "shipped_differences", "shipped_grid", "shipped_grid_html",
           "shipped_reproduction", "slow_metrics", "still_wanted", "store",
           "store_revision",
           "study_warnings", "suite", "suite_named", "trials_by_id", "warm_start",
           "cell_slices", "cell_trials", "challenge_file", "held", "pair_ids", "parse_slice", "remember_upload",
           "shipped_studies", "shipped_studies_current", "playground_judged", "playground_scored", "playground_scores",
           "published_titles", "current_visitor"]
