import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog, catalogStream } from '../../commands/catalog/catalog';
import { createPrompt } from '../../commands/catalog/create-prompt';
import { createTopic } from '../../commands/catalog/create-topic';
import { deletePrompt } from '../../commands/catalog/delete-prompt';
import { markPromptAnswered } from '../../commands/catalog/mark-prompt-answered';
import { type CommandContext, foldEvents } from '../../commands/handle';
import { decodeEvent, SYSTEM_ACTOR } from '../../src/domain/events';
import { isDomainError } from '../../src/domain/errors';
import { newId } from '../../src/domain/ids';
import type { TestStore } from '../support/db';
import { sharedStore } from '../support/per-worker';

let db: TestStore;
beforeAll(async () => {
  db = await sharedStore();
});
afterAll(async () => db?.close());

const ctx = (): CommandContext => ({ store: db.store, organizationId: newId(), actor: SYSTEM_ACTOR });

/** The catalogue as the log says, folded from scratch (no handler cache). */
async function fromLog(websiteId: string) {
  const events = await db.store.readStream(catalogStream(websiteId));
  const decoded = events.map((e) => decodeEvent(e.id, e.type, e.data));
  return foldEvents(Catalog, decoded);
}

describe('delete and the first-answer marker race', () => {
  it('given both at once, many rounds, then a prompt is either hard-deleted with no answer admitted, or answered and soft-deleted', async () => {
    const website = newId();
    const c = ctx();
    let hard = 0;
    let soft = 0;
    for (let round = 0; round < 60; round++) {
      const p = await createPrompt(c, { website_id: website, text: `race ${round}` });
      if (isDomainError(p)) throw new Error(p.message);
      const id = p.result.id;
      // alternate who starts first so both interleavings are exercised
      const [del, mark] =
        round % 2 === 0
          ? await Promise.all([
              deletePrompt(c, { website_id: website, prompt_id: id }),
              markPromptAnswered(c, { website_id: website, prompt_id: id }),
            ])
          : await Promise.all([
              markPromptAnswered(c, { website_id: website, prompt_id: id }),
              deletePrompt(c, { website_id: website, prompt_id: id }),
            ]).then(([m, d]) => [d, m] as const);
      if (isDomainError(del)) throw new Error(del.message);
      const state = (await fromLog(website)).prompts.get(id)!;
      if (isDomainError(mark)) {
        expect(mark.kind).toBe('not_found');
        expect(del.result.soft_deleted).toBe(false);
        expect(state).toMatchObject({ hard_deleted: true, has_answers: false });
        hard++;
      } else {
        expect(del.result.soft_deleted).toBe(true);
        expect(state).toMatchObject({ soft_deleted: true, hard_deleted: false, has_answers: true });
        soft++;
      }
      // the invariant, whatever the interleaving: no hard-deleted prompt ever has history
      expect(state.hard_deleted && state.has_answers).toBe(false);
    }
    expect(hard + soft).toBe(60);
  });

  it('given both decided on the same revision (forced), then the loser decides again on fresh state, whichever appends first', async () => {
    const website = newId();
    for (const first of ['delete', 'mark'] as const) {
      const setup = ctx();
      const p = await createPrompt(setup, { website_id: website, text: `forced ${first}` });
      if (isDomainError(p)) throw new Error(p.message);
      // both appends are held until both were decided, then released in a chosen order
      const held: { who: string; go: () => void }[] = [];
      let bothDecided: () => void = () => undefined;
      const decided = new Promise<void>((r) => (bothDecided = r));
      const gated = (who: string): CommandContext => ({
        ...setup,
        store: {
          ...db.store,
          readStream: db.store.readStream.bind(db.store),
          append: async (...args: Parameters<typeof db.store.append>) => {
            if (held.length < 2 && !held.some((h) => h.who === who)) {
              await new Promise<void>((go) => {
                held.push({ who, go });
                if (held.length === 2) bothDecided();
              });
            }
            return db.store.append(...args);
          },
        },
      });
      const del = deletePrompt(gated('delete'), { website_id: website, prompt_id: p.result.id });
      const mark = markPromptAnswered(gated('mark'), { website_id: website, prompt_id: p.result.id });
      await decided;
      const order = first === 'delete' ? ['delete', 'mark'] : ['mark', 'delete'];
      held.find((h) => h.who === order[0])!.go();
      await (order[0] === 'delete' ? del : mark);
      held.find((h) => h.who === order[1])!.go();
      const [d, m] = await Promise.all([del, mark]);
      if (isDomainError(d)) throw new Error(d.message);
      const state = (await fromLog(website)).prompts.get(p.result.id)!;
      if (first === 'delete') {
        expect(d.result.soft_deleted).toBe(false);
        expect(m).toEqual({ kind: 'not_found', message: 'Prompt not found' });
        expect(state).toMatchObject({ hard_deleted: true, has_answers: false });
      } else {
        expect(isDomainError(m)).toBe(false);
        expect(d.result.soft_deleted).toBe(true);
        expect(state).toMatchObject({ soft_deleted: true, hard_deleted: false, has_answers: true });
      }
    }
  });

  it('given a second marker after the first, then it appends nothing', async () => {
    const website = newId();
    const c = ctx();
    const p = await createPrompt(c, { website_id: website, text: 'twice' });
    if (isDomainError(p)) throw new Error(p.message);
    const results = await Promise.all(Array.from({ length: 5 }, () => markPromptAnswered(c, { website_id: website, prompt_id: p.result.id })));
    const firsts = results.filter((r) => !isDomainError(r) && r.result.first);
    expect(firsts).toHaveLength(1);
    const events = await db.store.readStream(catalogStream(website));
    expect(events.filter((e) => e.type === 'PromptAnswered')).toHaveLength(1);
  });
});

describe('many writers of one catalogue', () => {
  it('given 12 concurrent writes to one website, then all of them land, none is lost or doubled', async () => {
    const website = newId();
    const c = ctx();
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => createTopic(c, { website_id: website, name: `Topic ${i}` })));
    expect(results.every((r) => !isDomainError(r))).toBe(true);
    const state = await fromLog(website);
    expect([...state.topics.values()].map((t) => t.name).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `Topic ${i}`).sort());
  });
});
