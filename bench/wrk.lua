-- wrk script for `make bench` (bench/run.py writes the request file and reads the result).
--
-- BENCH_REQUESTS names a file of requests, one a line, tab-separated:
--   method, path, Authorization value or "-", If-None-Match value or "-", JSON body or "-".
-- Thread i of BENCH_THREADS sends lines i, i + n, i + 2n, ... in turn, so requests meant to be
-- sent once (a ticket to check in, an image to draw) are, until a thread runs out and starts
-- over: `wrapped` counts those restarts, and `furthest` is the last line any thread sent (in flight
-- or answered). done() prints one line of JSON: statuses, latency, those two.
--
-- A line with a sixth field, a uuid, waits for an answer that names it ("uuid": "<it>" in its
-- body): the thread that got that answer sends the line next, once (a booking's confirmation
-- after its reservation). Such lines take no turn of their own.

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

local function prepare(f)
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
  waiting, ready = {}, {}  -- lines waiting for an answer, by its uuid; and those it released
  furthest = -1  -- the last line of the file this thread sent, counting from 0
  local n, turns = 0, 0
  for line in io.lines(os.getenv("BENCH_REQUESTS")) do
    local f = split(line)
    if f[6] and f[6] ~= "" then
      waiting[f[6]] = {request = prepare(f), number = n}
    else
      if turns % count == id then
        table.insert(formatted, prepare(f))
        table.insert(numbers, n)
      end
      turns = turns + 1
    end
    n = n + 1
  end
end

function request()
  local released = table.remove(ready)
  if released then
    furthest = math.max(furthest, released.number)
    return released.request
  end
  position = position + 1
  if position > #formatted then
    position, wrapped = 1, wrapped + 1
  end
  furthest = math.max(furthest, numbers[position])
  return formatted[position]
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if body and next(waiting) ~= nil then
    for uuid in body:gmatch('"uuid"%s*:%s*"([^"]+)"') do
      local line = waiting[uuid]
      if line then
        waiting[uuid] = nil
        table.insert(ready, line)
        break
      end
    end
  end
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
