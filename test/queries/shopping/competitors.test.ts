import { describe, expect, it } from 'vitest';
import { competitorBreakdown } from '../../../queries/shopping/competitors';

const tracked = [
  { id: 'b', name: 'Acme', is_self: true },
  { id: 'c1', name: 'Zeta', is_self: false },
  { id: 'c2', name: 'Beta', is_self: false },
  { id: 'c3', name: 'Alpha', is_self: false },
];

describe('shopping competitors: the breakdown per tracked entity', () => {
  it('given cards of the brand and competitors, then the brand first, then competitors by appearances, ties by name, with shares of the tracked cards', () => {
    const out = competitorBreakdown(
      {
        entities: [
          { entity_id: 'b', appearances: 2, position_sum: 3, best_position: 1 },
          { entity_id: 'c1', appearances: 4, position_sum: 10, best_position: 2 },
          { entity_id: 'c2', appearances: 2, position_sum: 5, best_position: 2 },
          { entity_id: 'other', appearances: 100, position_sum: 1, best_position: 1 },
        ],
        entity_answers: [
          { entity_id: 'b', answers: 2, first_position_answers: 1 },
          { entity_id: 'c1', answers: 3, first_position_answers: 0 },
        ],
        entity_products: [{ side: 'competitor', entity_id: 'c1', products: 2 }],
      },
      tracked,
      10,
    );
    expect(out.map((e) => e.name)).toEqual(['Acme', 'Zeta', 'Beta', 'Alpha']);
    expect(out[0]).toEqual({
      entity_id: 'b',
      name: 'Acme',
      is_self: true,
      appearances: 2,
      answers: 2,
      answer_rate: 20,
      share_of_appearances: 25,
      avg_position: 1.5,
      best_position: 1,
      first_position_answers: 1,
      products: 0,
    });
    expect(out[1]).toMatchObject({ appearances: 4, answer_rate: 30, share_of_appearances: 50, avg_position: 2.5, products: 2 });
    expect(out[3]).toMatchObject({ entity_id: 'c3', appearances: 0, answers: 0, avg_position: null, best_position: null, share_of_appearances: 0 });
  });
});
