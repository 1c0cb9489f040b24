-- wrk script for bench/api: sends the bench key from BENCH_API_KEY (kept off the command line)
-- and prints one line `WRK_RESULT {json}` that src/load.ts parses. Latencies in microseconds.
local key = os.getenv("BENCH_API_KEY")
if key and key ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. key
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
