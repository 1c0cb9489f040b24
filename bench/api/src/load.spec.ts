import { parseWrkOutput } from './load';

describe('parseWrkOutput', () => {
  it('reads the line printed by wrk-report.lua', () => {
    const out = [
      'Running 10s test @ http://127.0.0.1:1234/v1/balance',
      'WRK_RESULT {"requests":25000,"durationUs":10000000,"p50Us":1200,"p90Us":2500,"p99Us":9000,"maxUs":31000,' +
        '"errors":{"connect":0,"read":0,"write":0,"status":3,"timeout":1}}',
      '',
    ].join('\n');
    expect(parseWrkOutput(out)).toEqual({
      requests: 25000,
      seconds: 10,
      rps: 2500,
      p50Ms: 1.2,
      p90Ms: 2.5,
      p99Ms: 9,
      maxMs: 31,
      errors: 4,
    });
  });

  it('refuses output without a result line', () => {
    expect(() => parseWrkOutput('unable to connect')).toThrow('wrk printed no result line');
  });
});
