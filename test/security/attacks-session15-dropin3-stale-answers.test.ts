/**
 * Attacker's review (session 15, helper-55's lead; confirmed and fixed by helper-58): an Express options delegate
 * answering ONE shared options object, which the application edits IN PLACE when its partners change (an origin
 * removed, another put in its place: the array keeps its length). corsPackagePolicies remembered a policy per answer
 * object and compiled again only when what the object held had changed, but compared an array's items only up to 256
 * (MAX_COMPARED_ITEMS) and a nested object (`email`) by identity: with 300 partner origins, or a sender removed from
 * `email.senders`, the old policy stayed, so the removed partner (say, its domain lapsed and the attacker bought it)
 * kept reading credentialed responses. Now every item of every array and the fields of nested plain objects are
 * compared on each request: what the answer holds now is what is judged.
 */
import { ampCors } from '@ampcors/express';
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

const FIRED = 'https://fired-partner.example'; // removed from the list; its domain now belongs to the attacker
const HIRED = 'https://hired-partner.example';

type Callback = (error: Error | null, options?: unknown) => void;

/** An app whose delegate answers `answer` (the one shared object) for every request. */
function appAnswering(answer: object): express.Express {
  const app = express();
  app.use(ampCors(((_req: unknown, cb: Callback) => cb(null, answer)) as never));
  app.all('/api', (_req, res) => void res.json({ secret: 'user data' }));
  app.use((_error: unknown, _req: unknown, res: express.Response, _next: unknown) => void res.status(500).end());
  return app;
}

async function readsWithCredentials(app: express.Express, from: string): Promise<boolean> {
  const res = await request(app).get('/api').set('Origin', from).set('Cookie', 'session=victim');
  return res.headers['access-control-allow-origin'] === from && res.headers['access-control-allow-credentials'] === 'true';
}

/** `count` partner origins, FIRED at `at`. */
function partners(count: number, at: number): string[] {
  const list = Array.from({ length: count }, (_, i) => `https://partner${i}.example`);
  list[at] = FIRED;
  return list;
}

describe('attack: a shared delegate answer edited in place at the same length', () => {
  for (const count of [257, 300, 1000, 10_000]) {
    for (const at of new Set([0, 255, 256, count - 1])) {
      it(`${count} origins, the fired partner at ${at} replaced in place: it no longer reads, the new one does`, async () => {
        const answer = { origin: partners(count, at), credentials: true };
        const app = appAnswering(answer);
        expect(await readsWithCredentials(app, FIRED)).toBe(true); // before: a partner
        answer.origin[at] = HIRED;
        expect(answer.origin).toHaveLength(count);
        expect(await readsWithCredentials(app, FIRED)).toBe(false);
        expect(await readsWithCredentials(app, HIRED)).toBe(true);
      });
    }
  }

  it('the fired origin swapped to another index (same items, another order) and then removed: judged on each change', async () => {
    const answer = { origin: partners(400, 10), credentials: true };
    const app = appAnswering(answer);
    expect(await readsWithCredentials(app, FIRED)).toBe(true);
    [answer.origin[10], answer.origin[399]] = [answer.origin[399] as string, answer.origin[10] as string];
    expect(await readsWithCredentials(app, FIRED)).toBe(true);
    answer.origin[399] = HIRED;
    expect(await readsWithCredentials(app, FIRED)).toBe(false);
  });

  it('publishers-mode `origins` (300 items) edited in place: the removed origin is denied', async () => {
    const answer = { publishers: ['example.com'], origins: partners(300, 299) };
    const app = appAnswering(answer);
    expect(await readsWithCredentials(app, FIRED)).toBe(true);
    answer.origins[299] = HIRED;
    expect(await readsWithCredentials(app, FIRED)).toBe(false);
    expect(await readsWithCredentials(app, HIRED)).toBe(true);
  });

  it('a nested object: a sender removed from email.senders in place is no longer answered AMP-Email-Allow-Sender', async () => {
    const answer = { origins: ['https://www.example.com'], email: { senders: ['fired@example.com', 'ok@example.com'] } };
    const app = appAnswering(answer);
    const allowsSender = async () => {
      const res = await request(app).post('/api').set('Origin', 'https://www.example.com').set('AMP-Email-Sender', 'fired@example.com');
      return res.headers['amp-email-allow-sender'];
    };
    expect(await allowsSender()).toBe('fired@example.com');
    answer.email.senders[0] = 'new@example.com';
    expect(await allowsSender()).toBeUndefined();
  });

  it('a getter answering the current list (swapped, or edited in place): judged on what it returns now', async () => {
    let current = partners(300, 5);
    const answer = {
      get origin() {
        return current;
      },
      credentials: true,
    };
    const app = appAnswering(answer);
    expect(await readsWithCredentials(app, FIRED)).toBe(true);
    current = partners(300, 6);
    current[6] = HIRED;
    expect(await readsWithCredentials(app, FIRED)).toBe(false);
    current[6] = FIRED;
    expect(await readsWithCredentials(app, FIRED)).toBe(true);
    current[6] = HIRED;
    expect(await readsWithCredentials(app, FIRED)).toBe(false);
  });

  for (const count of [3, 300]) {
    it(`${count} RegExps with the g flag whose lastIndex every match moves: the same verdict on every request, a removed one stops matching`, async () => {
      const patterns = Array.from({ length: count }, (_, i) => new RegExp(`^https:\\/\\/shop${i}\\.example\\.com$`, 'g'));
      const answer = { origin: patterns, credentials: true };
      const app = appAnswering(answer);
      for (let round = 0; round < 4; round++) {
        for (const pattern of patterns) pattern.lastIndex = round * 7; // the application's own use of its RegExps
        expect(await readsWithCredentials(app, 'https://shop1.example.com')).toBe(true);
      }
      answer.origin[1] = /^https:\/\/shop-new\.example\.com$/g;
      expect(await readsWithCredentials(app, 'https://shop1.example.com')).toBe(false);
    });
  }

  it('an answer holding a function (remembered by object) with a short list edited in place: judged on the list now', async () => {
    const answer = {
      origin: [FIRED, 'https://b.example'],
      credentials: true,
      verifier: { verify: () => ({ allowed: false, origin: null, reason: 'unknown-origin', detail: '' }) },
    };
    const app = appAnswering(answer);
    expect(await readsWithCredentials(app, FIRED)).toBe(true);
    answer.origin[0] = HIRED;
    expect(await readsWithCredentials(app, FIRED)).toBe(false);
  });
});
