import type { AnswerEngine, AnswerRequest, AnswerResult, EngineWebsite } from '../../src/engines/port';
import { createEngines, type Engines } from '../../src/engines/registry';

/** A brand with four competitors (some with other names they go by): the website simulated answers are written for. */
export const SIM_WEBSITE: EngineWebsite = {
  brand: { name: 'Acme Tasks', domain: 'acmetasks.com' },
  competitors: [
    { name: 'Trello', domain: 'trello.com', identifiers: ['Trello Boards'] },
    { name: 'Asana', domain: 'asana.com', identifiers: ['Asana Inc'] },
    { name: 'Monday', domain: 'monday.com', identifiers: ['monday.com Work OS', 'MondayWorkOS'] },
    { name: 'ClickUp', domain: 'clickup.com', identifiers: [] },
  ],
};

/**
 * The simulated engines with every ask going through `ask` first: it may wait, count, throw or answer itself, and
 * calls `simulated()` for the simulated engine's own answer.
 */
export function simulatedEnginesWith(ask: (model: string, req: AnswerRequest, simulated: () => Promise<AnswerResult>) => Promise<AnswerResult>): Engines {
  const sim = createEngines({ mode: 'simulated' });
  return {
    mode: 'simulated',
    status: () => sim.status(),
    engineFor(model) {
      const inner = sim.engineFor(model);
      const e: AnswerEngine = { ask: (req) => ask(model, req, () => inner.ask(req)) };
      return e;
    },
  };
}

/** A switch that holds every ask while it is on (asks wait at `wait()` until `release()`). */
export function holdSwitch() {
  let held: Promise<void> | null = null;
  let release: (() => void) | null = null;
  return {
    async wait() {
      if (held) await held;
    },
    hold() {
      held = new Promise((r) => (release = r));
    },
    release() {
      held = null;
      release?.();
    },
  };
}
