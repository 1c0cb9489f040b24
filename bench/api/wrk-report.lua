-- wrk script for bench/api. Requests rotate through the API keys listed one per line in the file
-- BENCH_API_KEYS_FILE (kept off the command line); every thread starts at its own place in the
-- list. Prints one line `WRK_RESULT {json}` that src/load.ts parses. Latencies in microseconds.
local prepared = {}
local n = 0

init = function(args)
  local file = os.getenv("BENCH_API_KEYS_FILE")
  if file and file ~= "" then
    for key in io.lines(file) do
      if key ~= "" then
        prepared[#prepared + 1] = wrk.format(nil, nil, { ["Authorization"] = "Bearer " .. key })
      end
    end
  end
  if #prepared == 0 then prepared[1] = wrk.format() end
  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "0", 16) % 100000)
  n = math.random(#prepared)
end

request = function()
  n = n % #prepared + 1
  return prepared[n]
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_RESULT {"requests":%.0f,"durationUs":%.0f,"p50Us":%.0f,"p90Us":%.0f,"p99Us":%.0f,"maxUs":%.0f,' ..
      '"errors":{"connect":%.0f,"read":%.0f,"write":%.0f,"status":%.0f,"timeout":%.0f}}\n',
    summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
