/**
 * The Node.js release Hark runs on, and the refusal of an older one.
 *
 * Node 20 left support in April 2026. 26 is the active LTS line (from October 2026; security fixes
 * until April 2029); 24 is in maintenance only until April 2028, so 26 gives a deployment made now
 * a year longer before the next move. Every native dependency passes its tests on it: koffi
 * calling the OpenSSL inside Node (the upload hasher: packages/storage/src/native-sha256.spec.ts,
 * which fails where it does not load), onnxruntime-node (the speech gate and the neural diarizer:
 * packages/diarization/test/neural.test.ts and diarize.test.ts), Prisma's client and migrations
 * (packages/db/test/migrate.test.ts and every integration test), msgpackr-extract (BullMQ), esbuild
 * and swc (the builds, jest), and puppeteer-core driving Chromium (apps/api/test/try-page.test.ts).
 * The scripts install exactly this release where the machine's Node is older
 * (scripts/lib.sh), the Docker images are built on it, and every package.json's `engines` says so;
 * a unit test keeps all of them equal to this constant.
 */
export const REQUIRED_NODE_VERSION = '26.12.1';

/** [major, minor, patch] of `26.12.1` or `v26.12.1`; NaN where a part is not a number. */
const parts = (v: string): number[] => [0, 1, 2].map((i) => Number(v.replace(/^v/, '').split('.')[i] ?? 0));

/** Whether release `have` is `want` or later (a version that does not parse is not). */
function atLeast(have: number[], want: number[]): boolean {
  for (let i = 0; i < want.length; i++) {
    if (!(have[i]! >= want[i]!)) return false;
    if (have[i]! > want[i]!) return true;
  }
  return true;
}

/** Why a process on Node `version` (process.versions.node) must not run Hark; null when it may. */
export function unsupportedNodeReason(version: string): string | null {
  if (atLeast(parts(version), parts(REQUIRED_NODE_VERSION))) return null;
  return (
    `Hark needs Node.js ${REQUIRED_NODE_VERSION} or later (the ${parts(REQUIRED_NODE_VERSION)[0]} LTS line); ` +
    `this is Node.js v${version.replace(/^v/, '')}. scripts/up.sh installs Node.js ${REQUIRED_NODE_VERSION} ` +
    `into .hark/node; the Docker images run it.`
  );
}
