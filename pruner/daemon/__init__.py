"""`statlas daemon`: the HTTP API (servers.http) in every daemon, the scheduled jobs in
the one that leads. run.py starts and stops it; leader.py elects the leader; scheduler.py
runs the jobs; schedules.py keeps the schedules in the metastore.

See docs/daemon.md.
"""
