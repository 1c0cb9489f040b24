import { REQUIRED_NODE_VERSION, unsupportedNodeReason } from './node-runtime';

describe('unsupportedNodeReason', () => {
  it.each([
    '20.20.2',
    '22.23.5',
    '24.22.3',
    '26.0.0',
    '26.12.0',
    '25.9.0',
    'v20.19.0',
    '26.12.1-pre',
    'garbage',
  ])('refuses %s, naming the release it needs', (version) => {
    const reason = unsupportedNodeReason(version);
    expect(reason).toContain(`Hark needs Node.js ${REQUIRED_NODE_VERSION} or later (the 26 LTS line)`);
    expect(reason).toContain(`this is Node.js v${version.replace(/^v/, '')}`);
  });

  it.each([REQUIRED_NODE_VERSION, '26.12.2', '26.13.0', '27.0.0', '28.1.0', `v${REQUIRED_NODE_VERSION}`])(
    'accepts %s',
    (version) => expect(unsupportedNodeReason(version)).toBeNull(),
  );

  it('accepts the Node running this test (the scripts put the pinned release first on PATH)', () => {
    expect(unsupportedNodeReason(process.versions.node)).toBeNull();
  });
});
