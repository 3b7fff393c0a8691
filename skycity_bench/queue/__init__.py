"""Many reference machines, one benchmark: a PostgreSQL-backed job queue
(procrastinate) beside the review store in the same database.

    plan.py           `queue add`: candidates' bytes frozen in the database, one job per run
    queue_worker.py   `worker`: one job at a time through the one execution path, results
                      stored whole or not at all, stalled jobs (a killed worker) queued again
    status.py         `queue status`: queued / running / done / failed per tag, throughput, ETA
    jobs.py           the procrastinate app and its schema
    progress_page.py  the queue's progress page in the review app
"""
