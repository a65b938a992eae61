"""`last_play` texts: every simulated play is written from one of these templates."""

from __future__ import annotations

KICKOFF = "Kickoff: {kicking} kick off to {receiving}"
TD_PASS = "Touchdown {team}: {receiver} {yards}-yard catch from {passer}"
TD_RUN = "Touchdown {team}: {runner} {yards}-yard run"
TD_SPECIAL = "Touchdown {team}: {player} on special teams"
TD_GENERIC = "Touchdown {team}: {yards}-yard drive finished in the end zone"
AFTER_TD = {
    7: " (extra point good)",
    6: " (extra point no good)",
    8: " (two-point conversion good)",
}
OT_TD = " (game over)"
FIELD_GOAL = "Field goal {team}: {yards} yards, good"
SAFETY = "Safety {team}: {opponent} ball carrier tackled in the end zone"
PUNT = "{team} punt, {opponent} take over"
INTERCEPTION = "{team} pass intercepted by {opponent}"
FUMBLE = "{team} fumble, recovered by {opponent}"
DOWNS = "{team} turn the ball over on downs"
MISSED_FG = "{team} miss a {yards}-yard field goal"
END_OF_QUARTER = "End of the {ordinal} quarter"
HALFTIME = "Halftime"
END_OF_REGULATION = "End of regulation: tied {score}, overtime"
FINAL = "Final: {away} {away_score}, {home} {home_score}"
FINAL_OT = "Final (OT): {away} {away_score}, {home} {home_score}"
ORDINALS = {1: "1st", 2: "2nd", 3: "3rd", 4: "4th"}
# non-scoring drive endings and how often they happen
STOPS = ((PUNT, 60), (INTERCEPTION, 10), (FUMBLE, 7), (DOWNS, 8), (MISSED_FG, 5))
