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

/** Questions of the kind that website's buyers ask. */
export const SIM_PROMPTS = [
  'What is the best project management tool for a small team?',
  'Which task tracker integrates with Slack?',
  'Cheapest kanban software for freelancers',
  'How do I pick a work management platform?',
];

/** `n` consecutive UTC days from 2025-01-01, YYYY-MM-DD. */
export const simDays = (n: number) => Array.from({ length: n }, (_, i) => new Date(Date.UTC(2025, 0, 1 + i)).toISOString().slice(0, 10));

/**
 * The simulated engines with every ask going through `ask` first: it may wait, count, throw or answer itself, and
 * calls `simulated()` for the simulated engine's own answer.
 */
export function simulatedEnginesWith(
  ask: (model: string, req: AnswerRequest, simulated: () => Promise<AnswerResult>) => Promise<AnswerResult>,
): Engines {
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
