import { buildSignedRequest } from './signed-request';
import { signingSecretFromApiKey, verifySignature } from './signature';

const apiKey = 'tk_' + 'k'.repeat(40);
const item = {
  id: 'tr_1',
  status: 'done',
  externalId: 'ext-9',
  metadata: { order: 42, note: 'é' },
  createdAt: '2024-05-01T12:00:00.000Z',
};
const now = new Date('2024-05-01T12:00:05.900Z');

describe('buildSignedRequest', () => {
  const request = buildSignedRequest({
    transcriptListItem: item,
    deliveryId: 'whd_123',
    secretHex: signingSecretFromApiKey(apiKey),
    now,
  });

  it('sends the list item as a bare JSON object', () => {
    expect(JSON.parse(request.body)).toEqual(item);
    expect(request.body).toBe(JSON.stringify(item));
  });

  it('sets the four decided headers', () => {
    expect(request.headers).toEqual({
      'Content-Type': 'application/json',
      'User-Agent': 'Hark-Webhooks/1',
      'Hark-Delivery-Id': 'whd_123',
      'Hark-Signature': expect.stringMatching(/^t=1714564805,v1=[0-9a-f]{64}$/),
    });
  });

  it('signs so that a receiver holding the API key verifies it', () => {
    const header = request.headers['Hark-Signature'] ?? '';
    expect(verifySignature(request.body, header, apiKey, { now })).toBe(true);
    expect(verifySignature(request.body, header, 'tk_other', { now })).toBe(false);
  });

  it('drops transcript content even if the caller passed it', () => {
    const leaky = {
      ...item,
      text: 'secret words',
      words: [{ w: 'x' }],
      utterances: [],
      diarizationSegments: [],
    };
    const built = buildSignedRequest({ transcriptListItem: leaky, deliveryId: 'd', secretHex: 'abc', now });
    expect(JSON.parse(built.body)).toEqual(item);
    expect(leaky.text).toBe('secret words'); // the caller's object is not mutated
  });

  it('defaults the signing time to now', () => {
    const built = buildSignedRequest({
      transcriptListItem: item,
      deliveryId: 'd',
      secretHex: signingSecretFromApiKey(apiKey),
    });
    expect(verifySignature(built.body, built.headers['Hark-Signature'] ?? '', apiKey)).toBe(true);
  });
});
