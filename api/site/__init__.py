"""The first-party slate page's files (HTML, CSS, script), served by `api/routes/site.py`."""
