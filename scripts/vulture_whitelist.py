"""Names that vulture (the dead-code finder) cannot see used, because a framework calls or
reads them rather than the bench's own code: typer commands, FastAPI routes and handlers,
pydantic validators and model fields (the evidence's and the report's JSON), the scorer
registry's decorated functions, Jinja templates, SQLAlchemy tables and event listeners,
Alembic's migration hooks, the standard library's handler methods and PyAV's codec settings.

    .venv/bin/vulture skycity_bench scripts/vulture_whitelist.py --min-confidence 60

Vulture matches by name only: a line here makes the name used wherever it is defined, so a
name is listed only when every definition of it the package holds is read by a framework
(the exceptions are said beside them). Never imported: each line only reads a name.
"""

# ruff: noqa: B018
# (every line below is a bare read of a name, which is this file's whole purpose)

from typing import Any

_: Any = None  # stands for whatever holds each name

# typer: commands registered by each commands/<name>.py's register(app)
_.leaderboard_cmd

# FastAPI: routes registered by their decorators on each APIRouter, the exception handler
_.progress_page
_.api_queue_status
_.api_docs
_.openapi_json
_.team_page
_.team_invite
_.team_disable
_.team_finalize
_.team_unfinalize
_.api_finalize
_.api_unfinalize
_.api_unblind
_.api_invite
_.api_accounts
_.api_audit
_.calibration_page
_.anchors_from_sheet_form
_.anchor_by_hand_form
_.anchor_remove_form
_.settings_form
_.agreement_page
_.api_calibration
_.api_anchors
_.api_anchor_by_hand
_.api_anchors_from_sheet
_.api_anchor_remove
_.api_settings
_.api_agreement
_.candidate_page
_.candidate_submit
_.sheet_page
_.sheet_export
_.run_file
_.api_rubric
_.api_me
_.api_new_token
_.api_my_queue
_.api_queue
_.api_candidates
_.api_candidate
_.api_my_reviews
_.api_submit
_.api_sheet
_.thumb
_.runs_page
_.choose_form
_.api_runs
_.api_runs_of
_.api_choose
_.signin_link
_.signin
_.signout
_.me_page
_.me_new_token
_.me_revoke_token
_.timings_page
_.api_timings
_._too_large

# pydantic: validators and hooks pydantic calls
_._known_methods
_._sums
_._from_model
_.model_post_init
_._far_frames_taken
_._decided

# pydantic: model fields written to report.json (the evidence, the report, the rubric) and
# read by the scorers, the review app and anyone reading the JSON
_.timing_ms
_.claimed_categories
_.rechecked_by_other_pairs
_.other_pairs_frames
_.rechecked_by_far_pair
_.rechecked_by_still_point
_.densified_times
_.lowest_evidence
_.compositor_animation
_.calibration_before
_.calibration_after
_.noise_of_passes
_.sharp_edge_share
_.colour_bgr
_.excused_texts
_.t_wall  # also browser/network.py's RequestRecord field the evidence is copied from
_.rewritten_imports
_.cached_at
_.fetched_for_this_run
_.fetch_failed
_.watched_s
_.bench_errors
_.popup_count
_.left_document
_.renderer_crashes
_.changed_share
_.changed_cells
_.after_click
_.hook_methods
_.hook_has_time
_.ways
_.pass_
_.measured_pass_capture
_.second_pass
_.first_frame_s
_.size_bytes
_.frames_per_wall_s
_.capture_ms_mean
_.encode_ms_mean
_.late_frames
_.decode_ms_mean
_.encode_wait_s
_.density_frames
_.font_px
_.distance_px
_.opened_within_ms
_.unnamed_changes
_.closed_after_css_transition
_.close_watched_ms
_.clipped_start
_.clipped_end
_.under
_.moved_to
_.auto_card_before_hover
_.screenshots
_.inner_size
_.ontouchstart
_.max_touch_points
_.hook_raw_count
_.analysis_cpu_s
_.spent_s
_.schema_
_.bench_version
_.rubric_sha256  # the Report's field; inputs/rubric.py's function of this name has no caller
_.cases
_.review_notes

# the scorer registry: item scorers registered by @scorer(...), called through all_scorers()
_.ending
_.density_count
_.density_categories
_.density_behavior
_.framing
_.single_file
_.auto_display
_.manual_priority
_.card_placement

# Jinja templates of the review app (admin_calibration.html)
_.drift_item

# SQLAlchemy: tables registered on the schema's MetaData, event listeners, a DBAPI setting
_.candidate_labels
_.run_files
_.file_chunks
_.queue_candidates
_.queue_runs
_.run_choice
_.thumbnails
_.review_timings
_.run_summaries
_._on_connect
_._on_begin
_.isolation_level

# Alembic: what each migration script must define
_.revision
_.down_revision
_.downgrade

# the standard library: http.server's and html.parser's handler methods and settings
_.do_GET
_.log_message
_.daemon_threads
_.handle_starttag
_.handle_data
_.handle_endtag

# PyAV: codec settings assigned on the video stream
_.pix_fmt
_.bit_rate
_.gop_size
_.thread_count
