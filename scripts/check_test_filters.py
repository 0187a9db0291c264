#!/usr/bin/env python3
"""Checks that the ctest tests of a test binary run each of its tests
exactly once.

The unit tests of a library are one binary (add_unit_test, ../CMakeLists.txt),
and so are the e2e harnesses (add_e2e_test, ../tests/CMakeLists.txt); each
module's ctest test runs it with a --gtest_filter made of the suites its
source names. A test that no filter matches would never run, and one that two
match would run twice; this lists the binary's tests (--gtest_list_tests) and
matches them against the filters as googletest does (`*` and `?`, patterns
separated by `:`).

Usage: check_test_filters.py --binary PATH NAME=FILTER [NAME=FILTER...]
                             [--binary PATH NAME=FILTER...]
Exit status 1, with one line per problem, when a test is run by no filter or
by more than one, or a filter runs no test.
"""
import fnmatch
import subprocess
import sys


def listed_tests(binary):
    """The full names (Suite.Test, Prefix/Suite.Test/Param) the binary holds."""
    out = subprocess.run([binary, "--gtest_list_tests"], check=True, capture_output=True, text=True).stdout
    names, suite = [], None
    for line in out.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            suite = line.split("#")[0].strip()  # "Suite." (a typed suite's "# TypeParam" comment off)
        else:
            names.append(suite + line.split("#")[0].strip())
    return names


def matches(name, filt):
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in filt.split(":"))


def check(binary, filters):
    problems = []
    runs = {name: [] for name in listed_tests(binary)}
    for label, filt in filters:
        hit = [name for name in runs if matches(name, filt)]
        if not hit:
            problems.append("%s: %s runs no test (--gtest_filter=%s)" % (binary, label, filt))
        for name in hit:
            runs[name].append(label)
    for name, labels in runs.items():
        if not labels:
            problems.append("%s: %s is run by no ctest test" % (binary, name))
        elif len(labels) > 1:
            problems.append("%s: %s is run by %s" % (binary, name, ", ".join(labels)))
    return problems, len(runs)


def main(argv):
    groups = []  # (binary, [(name, filter)])
    args = iter(argv)
    for arg in args:
        if arg == "--binary":
            groups.append((next(args), []))
        elif groups and "=" in arg:
            name, filt = arg.split("=", 1)
            groups[-1][1].append((name, filt))
        else:
            print(__doc__, file=sys.stderr)
            return 2
    problems = []
    for binary, filters in groups:
        found, count = check(binary, filters)
        problems += found
        print("%s: %d tests, %d ctest tests" % (binary, count, len(filters)))
    for line in problems:
        print(line)
    return 1 if problems or not groups else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
