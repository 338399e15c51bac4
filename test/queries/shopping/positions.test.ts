import { describe, expect, it } from 'vitest';
import { positionDistribution } from '../../../queries/shopping/positions';
import { LAST_POSITION_BUCKET } from '../../../queries/shopping/sql';
import { emptyPositionBucket } from '../../support/shopping';

describe('shopping positions: cards per position', () => {
  it('given cards at a few positions, then every bucket from 1 to "10+" is listed, empty ones with zeros, with rates of each side\'s cards', () => {
    const out = positionDistribution(
      [
        { bucket: 1, cards: 5, own_cards: 2, competitor_cards: 2 },
        { bucket: '10' as unknown as number, cards: 4, own_cards: 0, competitor_cards: 2 },
      ],
      4,
      8,
    );
    expect(out).toHaveLength(LAST_POSITION_BUCKET);
    expect(out.map((b) => b.position)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10+']);
    expect(out[0]).toEqual({
      position: '1',
      cards: 5,
      own_cards: 2,
      competitor_cards: 2,
      other_cards: 1,
      own_rate: 50,
      competitor_rate: 25,
      own_share: 40,
    });
    expect(out[1]).toEqual(emptyPositionBucket('2'));
    expect(out[9]).toMatchObject({ position: '10+', cards: 4, competitor_rate: 25, other_cards: 2 });
  });
});
