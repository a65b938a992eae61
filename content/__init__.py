"""Content the service ships: the reference library (`reference/<kind>/<slug>.md`, see
docs/reference.md). A package only so that an installed service carries the files too."""
