// bench/ref_simdjson.cpp - reference for the import benchmark: simdjson's
// On-Demand API (Debian's libsimdjson-dev, -march=native) reads a Chrome
// trace and builds the per-operator table bench/ref_optable.py builds and
// proftop's report builds (calls, inclusive total, self, max, min per
// operator name, nesting per thread), on one thread. A test-only reference:
// the project's own code has no C++.
//
//   ref_simdjson FILE            the table; prints rows, events, seconds
//   ref_simdjson --parse FILE    the parser alone: the same fields of
//                                every event read (the rest skipped, as
//                                simdjson skips), no table
//
// Prints "rows N events E cpu_s C wall_s W load_s L" (CPU time of this
// process; L: the wall time of reading the file into simdjson's padded
// buffer, part of W).
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

using namespace simdjson;

static double now_s(clockid_t c)
{
	timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct ev {
	double ts, dur;
	uint32_t name;
};

struct row {
	uint64_t calls = 0;
	double total = 0, self = 0, max = 0, min = INFINITY;
};

static double num(ondemand::value v)
{
	double d;
	if (v.get_double().get(d) == SUCCESS)
		return d;
	std::string_view s; // Kineto writes some numbers as strings
	if (v.get_string().get(s) == SUCCESS)
		return strtod(std::string(s).c_str(), nullptr);
	return 0;
}

static int64_t id_of(ondemand::value v)
{
	int64_t i;
	if (v.get_int64().get(i) == SUCCESS)
		return i;
	double d;
	if (v.get_double().get(d) == SUCCESS)
		return (int64_t)d;
	std::string_view s;
	if (v.get_string().get(s) == SUCCESS)
		return (int64_t)std::hash<std::string_view>{}(s);
	return 0;
}

int main(int argc, char **argv)
{
	bool parse_only = argc > 2 && !strcmp(argv[1], "--parse");
	const char *path = argv[argc - 1];
	if (argc < 2) {
		fprintf(stderr, "usage: ref_simdjson [--parse] FILE\n");
		return 2;
	}
	double c0 = now_s(CLOCK_PROCESS_CPUTIME_ID), w0 = now_s(CLOCK_MONOTONIC);
	padded_string json;
	if (padded_string::load(path).get(json)) {
		fprintf(stderr, "ref_simdjson: cannot read %s\n", path);
		return 1;
	}
	double wl = now_s(CLOCK_MONOTONIC);
	ondemand::parser parser;
	ondemand::document doc;
	if (parser.iterate(json).get(doc)) {
		fprintf(stderr, "ref_simdjson: not JSON\n");
		return 1;
	}
	std::deque<std::string> names;
	std::unordered_map<std::string_view, uint32_t> ids;
	std::map<std::pair<int64_t, int64_t>, std::vector<ev>> per_thread;
	uint64_t events = 0;
	double sink = 0;
	std::vector<ev> *last = nullptr;
	int64_t last_pid = 0, last_tid = 0;
	ondemand::array arr;
	if (doc["traceEvents"].get_array().get(arr)) {
		fprintf(stderr, "ref_simdjson: no traceEvents array\n");
		return 1;
	}
	for (auto item : arr) {
		ondemand::object o;
		if (item.get_object().get(o))
			continue;
		events++;
		std::string_view ph, cat, name;
		double ts = 0, dur = 0;
		int64_t pid = 0, tid = 0;
		for (auto field : o) {
			ondemand::raw_json_string key; // compared unescaped: the keys are plain
			if (field.key().get(key))
				continue;
			ondemand::value v = field.value();
			error_code err = SUCCESS;
			if (key == "ph")
				err = v.get_string().get(ph);
			else if (key == "cat")
				err = v.get_string().get(cat);
			else if (key == "name")
				err = v.get_string().get(name);
			else if (key == "ts")
				ts = num(v);
			else if (key == "dur")
				dur = num(v);
			else if (key == "pid")
				pid = id_of(v);
			else if (key == "tid")
				tid = id_of(v);
			(void)err; /* a field of another type stays empty */
		}
		if (parse_only) {
			sink += ts + dur + (double)(pid + tid) + (double)(ph.size() + cat.size() + name.size());
			continue;
		}
		if (ph != "X" || (cat != "cpu_op" && cat != "Operator"))
			continue;
		auto it = ids.find(name);
		uint32_t id;
		if (it == ids.end()) {
			names.emplace_back(name);
			id = (uint32_t)(names.size() - 1);
			ids.emplace(std::string_view(names.back()), id);
		} else {
			id = it->second;
		}
		if (!last || last_pid != pid || last_tid != tid) { // runs of one thread
			last = &per_thread[{pid, tid}];
			last_pid = pid;
			last_tid = tid;
		}
		last->push_back({ts, dur, id});
	}
	std::vector<row> rows(names.size());
	for (auto &pt : per_thread) {
		auto &v = pt.second;
		std::sort(v.begin(), v.end(), [](const ev &a, const ev &b) {
			return a.ts != b.ts ? a.ts < b.ts : a.dur > b.dur;
		});
		struct open {
			double end, dur, child;
			uint32_t name;
		};
		std::vector<open> stack;
		auto close = [&](const open &o) {
			row &r = rows[o.name];
			r.calls++;
			r.total += o.dur;
			r.self += std::max(0.0, o.dur - o.child);
			r.max = std::max(r.max, o.dur);
			r.min = std::min(r.min, o.dur);
		};
		for (const ev &e : v) {
			while (!stack.empty() && stack.back().end <= e.ts) {
				close(stack.back());
				stack.pop_back();
			}
			if (!stack.empty())
				stack.back().child += e.dur;
			stack.push_back({e.ts + e.dur, e.dur, 0.0, e.name});
		}
		while (!stack.empty()) {
			close(stack.back());
			stack.pop_back();
		}
	}
	double c1 = now_s(CLOCK_PROCESS_CPUTIME_ID), w1 = now_s(CLOCK_MONOTONIC);
	printf("rows %zu events %llu cpu_s %.4f wall_s %.4f load_s %.4f%s\n",
	       parse_only ? (size_t)0 : rows.size(), (unsigned long long)events, c1 - c0, w1 - w0,
	       wl - w0, sink < 0 ? " " : "");
	return 0;
}
