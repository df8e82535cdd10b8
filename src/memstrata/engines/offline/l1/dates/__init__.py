"""English dates in a sentence, resolved against the day the message was written.

``resolve.resolve`` runs every rule over a sentence and keeps the longest match where they overlap;
each rule module holds its patterns and what they mean:

- ``relative``: words whose day follows from the message day alone ("yesterday", "last week",
  "next summer", "on Friday");
- ``counted``: a count of days, weeks, months or years from the message day ("three days ago",
  "in two weeks", "for four months now"), but not a count that only measures ("365 days in a year");
- ``absolute``: named months, days and years ("June 5", "in March", "in 2016"), a missing year
  inferred;
- ``span``: what a rule reports and what ``resolve`` returns; ``daymath``: date arithmetic and
  the wording of dates in atom text, shared with the other languages' date rules.
"""
