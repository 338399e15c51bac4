/** What the pitch job tests share: a stub home page, engines that can hold a model's answers, and a pitch request. */
import { requestPitch } from '../../commands/pitches/request-pitch';
import { isDomainError } from '../../src/domain/errors';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { MODEL_IDS } from '../../src/domain/models';
import { type AnswerEngine, type AnswerRequest, EngineError } from '../../src/engines/port';
import { createEngines, type Engines } from '../../src/engines/registry';
import type { Outbound } from '../../src/net/safe-fetch';
import type { Runtime } from '../../src/runtime';

export const PITCH_MODELS = MODEL_IDS.slice(0, 4);

/** Every home page is Zentro's. */
export const stubOutbound: Outbound = {
  async fetch(url) {
    return {
      status: 200,
      headers: { 'content-type': 'text/html' },
      body: '<html><head><title>Zentro | Projects</title><meta name="description" content="Zentro is project management software."></head></html>',
      truncated: false,
      finalUrl: url,
      redirects: [],
      durationMs: 1,
    };
  },
};

/** The simulated engines, with `around` called before each answer of a model (a test holds, counts or refuses there). */
export function engines(around: (model: string, prompt: string, req: AnswerRequest) => Promise<void> = async () => {}): Engines {
  const sim = createEngines({ mode: 'simulated' });
  return {
    mode: sim.mode,
    status: () => sim.status(),
    engineFor(model) {
      const inner = sim.engineFor(model);
      const engine: AnswerEngine = {
        async ask(req) {
          await around(req.model, req.prompt, req);
          return inner.ask(req);
        },
      };
      return engine;
    },
  };
}

/** The simulated engines, refusing for good (a rejected provider key) every answer about `domain`'s prospect. */
export const enginesRefusing = (domain: string): Engines =>
  engines(async (model, _prompt, req) => {
    if (req.website?.brand.domain === domain) throw new EngineError('auth', 'the provider key was refused', { model });
  });

/** Admits a pitch report for an organization (as the route does, without its checks); its id. */
export async function submitPitch(rt: Runtime, organizationId: string, key: string, website_url = 'zentro.example'): Promise<string> {
  const r = await requestPitch(
    { store: rt.store, organizationId, actor: SYSTEM_ACTOR },
    { website_url, country: 'United States', language: 'English' },
    { key, db: rt.database.db, allowance: 10, models: PITCH_MODELS },
  );
  if (isDomainError(r)) throw new Error(r.message);
  return r.pitch_id;
}
