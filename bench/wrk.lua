-- wrk script for `make bench` (bench/run.py writes the request file and reads the result).
--
-- BENCH_REQUESTS names a file of requests, one a line, tab-separated:
--   method, path, Authorization value or "-", If-None-Match value or "-", JSON body or "-".
-- Thread i of BENCH_THREADS sends lines i, i + n, i + 2n, ... in turn, so requests meant to be
-- sent once (a ticket to check in, an image to draw) are, until a thread runs out and starts
-- over: `wrapped` counts those restarts, and `furthest` is the last line any thread sent (in flight
-- or answered). done() prints one line of JSON: statuses, latency, those two.

local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

local function split(line)
  local fields = {}
  for field in (line .. "\t"):gmatch("([^\t]*)\t") do
    table.insert(fields, field)
  end
  return fields
end

local function prepare(line)
  local f = split(line)
  local headers = {}
  if f[3] ~= "-" then headers["Authorization"] = f[3] end
  if f[4] ~= "-" then headers["If-None-Match"] = f[4] end
  local body = nil
  if f[5] ~= "-" then
    body = f[5]
    headers["Content-Type"] = "application/json"
  end
  return wrk.format(f[1], f[2], headers, body)
end

function init(args)
  local count = tonumber(os.getenv("BENCH_THREADS"))
  formatted, numbers, position, wrapped, statuses = {}, {}, 0, 0, {}
  furthest = -1  -- the last line of the file this thread sent, counting from 0
  local n = 0
  for line in io.lines(os.getenv("BENCH_REQUESTS")) do
    if n % count == id then
      table.insert(formatted, prepare(line))
      table.insert(numbers, n)
    end
    n = n + 1
  end
end

function request()
  position = position + 1
  if position > #formatted then
    position, wrapped = 1, wrapped + 1
  end
  furthest = math.max(furthest, numbers[position])
  return formatted[position]
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local totals, wraps, furthest = {}, 0, -1
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("statuses")) do
      totals[status] = (totals[status] or 0) + count
    end
    wraps = wraps + thread:get("wrapped")
    furthest = math.max(furthest, thread:get("furthest"))
  end
  local parts = {}
  for status, count in pairs(totals) do
    table.insert(parts, string.format('"%d": %d', status, count))
  end
  local e = summary.errors
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "statuses": {%s}, "wrapped": %d, "furthest": %d, ' ..
    '"socket_errors": {"connect": %d, "read": %d, "write": %d, "timeout": %d}, ' ..
    '"latency_us": {"p50": %d, "p90": %d, "p99": %d, "max": %d, "mean": %.1f}}\n',
    summary.requests, summary.duration, table.concat(parts, ", "), wraps, furthest,
    e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.max, latency.mean))
end
