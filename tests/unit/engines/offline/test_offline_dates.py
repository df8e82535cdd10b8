"""Relative and absolute dates resolved against the message day (Monday 8 May 2023)."""

from __future__ import annotations

from datetime import date

import pytest

from memstrata.engines.offline.l1.dates.daymath import next_weekday, previous_weekday, season_span
from memstrata.engines.offline.l1.dates.resolve import resolve
from memstrata.engines.offline.l1.tense import is_past

ANCHOR = date(2023, 5, 8)  # a Monday
D = date.fromisoformat


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("I went there yesterday", "2023-05-07", "2023-05-07"),
        ("I'm at home today", "2023-05-08", "2023-05-08"),
        ("We are going out tonight", "2023-05-08", "2023-05-08"),
        ("I'll call tomorrow", "2023-05-09", "2023-05-09"),
        ("Last night was fun", "2023-05-07", "2023-05-07"),
        ("the day before yesterday I left", "2023-05-06", "2023-05-06"),
        ("I ran a race last week", "2023-05-01", "2023-05-07"),
        ("I'll move next week", "2023-05-09", "2023-05-15"),
        ("I'm busy this week", "2023-05-08", "2023-05-14"),
        ("I started a job last month", "2023-04-01", "2023-04-30"),
        ("We go camping next month", "2023-06-01", "2023-06-30"),
        ("I painted it last year", "2022-01-01", "2022-12-31"),
        ("I will retire next year", "2024-01-01", "2024-12-31"),
        ("We will hike this weekend", "2023-05-13", "2023-05-14"),
        ("I went hiking this weekend", "2023-05-06", "2023-05-07"),
        ("I went hiking last weekend", "2023-05-06", "2023-05-07"),
        ("We'll meet next weekend", "2023-05-13", "2023-05-14"),
        ("I adopted a cat 3 days ago", "2023-05-05", "2023-05-05"),
        ("I moved two weeks ago", "2023-04-21", "2023-04-27"),
        ("I quit a month ago", "2023-04-01", "2023-04-30"),
        ("I started transitioning three years ago", "2020-01-01", "2020-12-31"),
        ("I ran a charity race last Saturday", "2023-05-06", "2023-05-06"),
        ("I saw her last Monday", "2023-05-01", "2023-05-01"),
        ("I signed up for a class on Friday", "2023-05-05", "2023-05-05"),
        ("I will visit on Friday", "2023-05-12", "2023-05-12"),
        ("Let's meet next Friday", "2023-05-12", "2023-05-12"),
        ("I joined a group last Tues.", "2023-05-02", "2023-05-02"),
        ("Last Fri I took my kids to a pottery workshop", "2023-05-05", "2023-05-05"),
        ("I'm leaving in two weeks", "2023-05-22", "2023-05-22"),
        ("We went to Spain last summer", "2022-06-01", "2022-08-31"),
        ("I moved here in 2016", "2016-01-01", "2016-12-31"),
        ("My party is on June 5", "2023-06-05", "2023-06-05"),
        ("I was born on 5 June 1990", "1990-06-05", "1990-06-05"),
        ("We met on May 3, 2022", "2022-05-03", "2022-05-03"),
        ("I was there in March", "2023-03-01", "2023-03-31"),
        ("I'll be there in March", "2024-03-01", "2024-03-31"),
    ],
)
def test_spans(text: str, start: str, end: str) -> None:
    r = resolve(text, ANCHOR)
    assert (r.start, r.end) == (D(start), D(end))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went to a support group yesterday", "I went to a support group on 7 May 2023"),
        ("See you tomorrow!", "See you on 9 May 2023!"),
        ("We are out tonight", "We are out on the night of 8 May 2023"),
        ("I ran a race last week", "I ran a race in the week before 8 May 2023"),
        ("I'll move next week", "I'll move in the week after 8 May 2023"),
        ("I started last month", "I started in April 2023"),
        ("I painted it last year!", "I painted it in 2022!"),
        ("I hiked last weekend", "I hiked on the weekend before 8 May 2023 (6-7 May 2023)"),
        ("We will hike this weekend", "We will hike on the weekend of 13-14 May 2023"),
        ("I ran last Saturday", "I ran on Saturday, 6 May 2023"),
        ("I moved two weeks ago", "I moved two weeks ago (around 24 April 2023)"),
        ("I quit three years ago", "I quit three years ago (around 2020)"),
        ("I adopted a cat 3 days ago", "I adopted a cat on 5 May 2023"),
        ("My party is on June 5", "My party is on June 5 2023"),
        ("I moved here in 2016", "I moved here in 2016"),
    ],
)
def test_text(text: str, expected: str) -> None:
    assert resolve(text, ANCHOR).text == expected


@pytest.mark.parametrize(
    "text",
    ["I go running every Saturday", "May I ask something?", "I love long walks", "We play on Sundays"],
)
def test_no_date(text: str) -> None:
    r = resolve(text, ANCHOR)
    assert (r.text, r.start, r.end) == (text, None, None)


def test_several_dates_give_the_whole_span() -> None:
    r = resolve("I flew out yesterday and I fly back next week", ANCHOR)
    assert (r.start, r.end) == (D("2023-05-07"), D("2023-05-15"))


def test_tense() -> None:
    assert is_past("I went there")
    assert is_past("We visited the museum")
    assert not is_past("I will go there")
    assert not is_past("I'm so excited for Saturday")


def test_weekday_helpers_are_strict() -> None:
    assert previous_weekday(ANCHOR, 0) == D("2023-05-01")
    assert next_weekday(ANCHOR, 0) == D("2023-05-15")
    assert next_weekday(ANCHOR, 1) == D("2023-05-09")


@pytest.mark.parametrize(
    ("season", "which", "anchor", "label"),
    [
        ("summer", "last", "2023-07-10", "summer 2022"),
        ("summer", "last", "2023-10-10", "summer 2023"),
        ("winter", "this", "2024-01-15", "winter 2023"),
        ("spring", "next", "2023-04-01", "spring 2024"),
    ],
)
def test_seasons(season: str, which: str, anchor: str, label: str) -> None:
    assert season_span(season, which, D(anchor), past=False)[2] == label


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the date takes the tense of its own clause, not of an "-ed" word elsewhere
        ("My favourite food is grilled sardines, so Lisbon in June is perfect.", "in June 2026"),
        ("We found a flat, Tom is finally moving to Lisbon on June 14.", "on June 14 2026"),
        ("We found a flat in June.", "in June 2025"),
    ],
)
def test_a_month_without_a_year_follows_its_clause_tense(text: str, expected: str) -> None:
    assert expected in resolve(text, date(2026, 3, 20)).text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # said on 2 March 2026 about the coming June, though the clause is in the past tense
        ("My partner Tom stayed in Porto until June.", "until June 2026"),
        ("We booked a cabin for next June.", "next June 2026"),
        ("We went there last June.", "last June 2025"),
        ("Last June we moved.", "Last June 2025"),
        ("Last August I told him about the trivia night.", "Last August 2025"),
        ("I lived there until February.", "until February 2026"),
    ],
)
def test_a_month_reads_against_its_marker_and_the_message_date(text: str, expected: str) -> None:
    assert expected in resolve(text, date(2026, 3, 2)).text


def test_until_a_month_takes_the_nearest_one() -> None:
    r = resolve("I will be away until March", date(2025, 12, 10))
    assert "until March 2026" in r.text and r.start == D("2026-03-01")


@pytest.mark.parametrize(
    ("text", "since"),
    [
        ("I've been playing for about four months now", "since around January 2023"),
        ("Seven years now, and I finally found my muses", "since around 2016"),
        ("I have been married for 3 years", "since around 2020"),
        ("We've known each other for two weeks", "since around 24 April 2023"),
        ("5 years already! Time flies", "since around 2018"),
    ],
)
def test_a_duration_up_to_now_says_since_when(text: str, since: str) -> None:
    r = resolve(text, ANCHOR)
    assert f"({since})" in r.text
    assert r.end == ANCHOR


def test_a_duration_in_the_past_is_no_since() -> None:
    r = resolve("I went to Spain for two weeks", ANCHOR)
    assert "since" not in r.text


def test_for_a_month_name_may_be_a_person() -> None:
    assert resolve("I baked a cake for June", ANCHOR).start is None


@pytest.mark.parametrize(
    ("text", "rewritten", "day"),
    [
        # a preposition that also opens a month ("by June", "until June") must not take the month
        # away from its day: the rewrite would read "by June 2023 12, 2023"
        ("We need the draft by June 12, 2023 at the latest.", "by June 12, 2023 at", "2023-06-12"),
        ("The lease runs until July 3rd, so we pack soon.", "until July 3rd 2023,", "2023-07-03"),
        ("My visa is valid since March 20, 2023 and I'm staying.", "since March 20, 2023 and", "2023-03-20"),
        ("The launch has a deadline of August 1, so I'm busy.", "of August 1 2023,", "2023-08-01"),
        ("I'll be back in June 30th for the wedding.", "in June 30th 2023 for", "2023-06-30"),
    ],
)
def test_a_month_followed_by_its_day_is_a_day(text: str, rewritten: str, day: str) -> None:
    r = resolve(text, ANCHOR)
    assert rewritten in r.text
    assert (r.start, r.end) == (D(day), D(day))


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("Napoleon died on Saint Helena on May 5, 1821.", "1821-05-05", "1821-05-05"),
        ("By April 1821 he could not keep any food down.", "1821-04-01", "1821-04-30"),
        ("The treaty was signed in June 1919 at Versailles.", "1919-06-01", "1919-06-30"),
    ],
)
def test_an_old_year_after_a_month_is_kept(text: str, start: str, end: str) -> None:
    r = resolve(text, ANCHOR)
    assert r.text == text
    assert (r.start, r.end) == (D(start), D(end))


@pytest.mark.parametrize(
    "text",
    [
        # a count of something in a span is a rate or a measure, not a day to come
        "There are 365 days in a year.",
        "There are 7 days in a week",
        "There are not enough hours in a day",
        "I go to the gym three times in a week",
        "I do it once in a month",
        "I read 20 books in a year",
        "We have had ups and downs in 3 years of marriage",
        # a stretch up to now
        "I haven't seen him in a year",
        "I havent been there in 5 years",
        "It is the first time in 10 years",
        # how long something takes or how often it happens, "now"
        "The build takes 3 days now",
        "I water them every 2 days now",
        "The build takes 3 days",
    ],
)
def test_a_count_of_days_is_no_date(text: str) -> None:
    r = resolve(text, ANCHOR)
    assert (r.text, r.start, r.end) == (text, None, None)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("I fly out in 3 days", "2023-05-11", "2023-05-11"),
        ("I have 3 exams in 2 weeks", "2023-05-22", "2023-05-22"),
        ("I'm running a marathon in a month", "2023-06-01", "2023-06-30"),
        ("I'll see you in a week from now", "2023-05-15", "2023-05-15"),
        # counted from the day it names, not from the message day
        ("What day will it be in a week from March 3, 2024?", "2024-03-03", "2024-03-03"),
    ],
)
def test_in_n_days_to_come_is_dated(text: str, start: str, end: str) -> None:
    r = resolve(text, ANCHOR)
    assert (r.start, r.end) == (D(start), D(end))


@pytest.mark.parametrize(
    "text",
    [
        "My last year at school was great",
        "I spent the last month of the year in Goa",
        "Every last weekend of the month we hike",
    ],
)
def test_the_last_one_of_something_is_no_date(text: str) -> None:
    r = resolve(text, ANCHOR)
    assert (r.text, r.start, r.end) == (text, None, None)


def test_the_last_month_is_the_stretch_up_to_the_message_day() -> None:
    r = resolve("So much has happened in the last month", ANCHOR)
    assert r.text == "So much has happened in the last month (8 April 2023 to 8 May 2023)"
    assert (r.start, r.end) == (D("2023-04-08"), ANCHOR)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("This week's episode was great", "2023-05-08", "2023-05-14"),
        ("We gave it our all during last week's scrimmage", "2023-05-01", "2023-05-07"),
    ],
)
def test_a_period_before_s_keeps_its_words(text: str, start: str, end: str) -> None:
    r = resolve(text, ANCHOR)
    assert (r.text, r.start, r.end) == (text, D(start), D(end))


def test_a_bare_weekday_keeps_the_space_before_it() -> None:
    assert resolve("I saw her Friday", ANCHOR).text == "I saw her on Friday, 5 May 2023"


def test_a_duration_after_a_verb_of_need_is_still_since() -> None:
    assert "(since around 2020)" in resolve("I've needed glasses for 3 years", ANCHOR).text


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("We go away the last week of June", "2023-06-01", "2023-06-30"),
        ("My last exam is in June", "2023-06-01", "2023-06-30"),
        ("I went there last time in June", "2022-06-01", "2022-06-30"),
    ],
)
def test_last_is_past_only_as_the_date_last_period(text: str, start: str, end: str) -> None:
    r = resolve(text, ANCHOR)
    assert (r.start, r.end) == (D(start), D(end))
    assert is_past("I saw her last week") and is_past("Last June was hot")
    assert not is_past("I never want this to last") and not is_past("My last exam is in June")


@pytest.mark.parametrize("text", ["I've got an exam in 2 weeks", "She's got a recital in two weeks"])
def test_have_got_is_present_possession(text: str) -> None:
    assert not is_past(text)
    r = resolve(text, ANCHOR)
    assert (r.start, r.end) == (D("2023-05-22"), D("2023-05-22"))
    assert is_past("I got a new job")


@pytest.mark.parametrize(
    "text", ["Kids today spend too much time online", "Young people today don't read", "Teenagers today!"]
)
def test_today_after_a_bare_plural_subject_means_nowadays(text: str) -> None:
    r = resolve(text, ANCHOR)
    assert (r.text, r.start, r.end) == (text, None, None)


@pytest.mark.parametrize(
    "text",
    [
        "I saw the kids today",
        "My kids today are sick",
        "The kids today were great",
        "The weather today is nice",
        "Tom teaches kids today",
    ],
)
def test_today_of_a_subject_that_is_no_generic_plural_is_the_day(text: str) -> None:
    r = resolve(text, ANCHOR)
    assert (r.start, r.end) == (ANCHOR, ANCHOR)


@pytest.mark.parametrize(
    "text", ['I play "Cyberpunk 2077" a lot', "I still run Windows 2000", "Blade Runner 2049 is my favourite"]
)
def test_a_number_ending_a_name_is_no_year(text: str) -> None:
    r = resolve(text, ANCHOR)
    assert (r.text, r.start, r.end) == (text, None, None)


@pytest.mark.parametrize(
    ("text", "year"),
    [
        ("We met at Christmas 2019", 2019),
        ("Since 2019 I've lived here", 2019),
        ("Early 2020 was rough", 2020),
        ("tutorials dated Feb 2024", 2024),
        ("Summer 2021 was fun", 2021),
    ],
)
def test_a_year_after_a_calendar_or_function_word_is_a_year(text: str, year: int) -> None:
    r = resolve(text, ANCHOR)
    assert (r.start, r.end) == (date(year, 1, 1), date(year, 12, 31))
