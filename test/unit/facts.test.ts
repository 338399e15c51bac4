import { describe, expect, it } from 'vitest';
import { dayAndTime, decodeFacts, encodeFacts, FactChunkBuilder } from '../../src/analysis/facts';

const E = ['brand', 'c1', 'c2'];

describe('metric fact chunks', () => {
  it('given rows, when encoded and decoded, then every column and dictionary comes back', () => {
    const b = new FactChunkBuilder(E);
    b.add({
      t: 0,
      prompt_id: 'p1',
      location_id: null,
      schedule_id: null,
      model: 'chatgpt',
      mentions: [
        [0, 2],
        [2, 1],
      ],
      cited: [2],
    });
    b.add({ t: 86_399_999, prompt_id: 'p2', location_id: 'l1', schedule_id: 's1', model: 'claude', mentions: [], cited: [0, 1] });
    b.add({ t: 5, prompt_id: 'p1', location_id: 'l1', schedule_id: null, model: 'chatgpt', mentions: [[1, 300]], cited: [] });
    const { meta, data } = encodeFacts(b.build());
    // stored as JSON + bytea: the data may come back at any byte offset
    const shifted = Buffer.concat([Buffer.from([9]), data]).subarray(1);
    const c = decodeFacts(JSON.parse(JSON.stringify(meta)), shifted);
    expect(c.n).toBe(3);
    expect(c.entities).toEqual(E);
    expect(c.prompts).toEqual(['p1', 'p2']);
    expect(c.locations).toEqual([null, 'l1']);
    expect(c.schedules).toEqual([null, 's1']);
    expect(c.models).toEqual(['chatgpt', 'claude']);
    expect([...c.t]).toEqual([0, 86_399_999, 5]);
    expect([...c.prompt]).toEqual([0, 1, 0]);
    expect([...c.location]).toEqual([0, 1, 1]);
    expect([...c.schedule]).toEqual([0, 1, 0]);
    expect([...c.model]).toEqual([0, 1, 0]);
    // positions above 255 read 255
    expect([...c.pos]).toEqual([2, 0, 1, 0, 0, 0, 0, 255, 0]);
    expect([...c.cite]).toEqual([0, 0, 1, 1, 1, 0, 0, 0, 0]);
  });

  it('given a stored chunk, when rows are appended, then the old rows stay and dictionaries grow', () => {
    const b = new FactChunkBuilder(E);
    b.add({ t: 1, prompt_id: 'p1', location_id: null, schedule_id: null, model: 'm', mentions: [[0, 1]], cited: [] });
    const stored = encodeFacts(b.build());
    const again = new FactChunkBuilder(E, decodeFacts(stored.meta, stored.data));
    again.add({ t: 2, prompt_id: 'p9', location_id: null, schedule_id: null, model: 'm', mentions: [[1, 1]], cited: [1] });
    const c = again.build();
    expect(c.n).toBe(2);
    expect(c.prompts).toEqual(['p1', 'p9']);
    expect([...c.pos]).toEqual([1, 0, 0, 0, 1, 0]);
    expect([...c.cite]).toEqual([0, 0, 0, 0, 1, 0]);
  });

  it('given a chunk laid out for other entities, when appended to, then it refuses (the website must be re-derived)', () => {
    const b = new FactChunkBuilder(['brand']);
    const stored = encodeFacts(b.build());
    expect(() => new FactChunkBuilder(E, decodeFacts(stored.meta, stored.data))).toThrow(/re-derive/);
  });

  it('given an empty chunk, then it encodes and decodes', () => {
    const c = decodeFacts(encodeFacts(new FactChunkBuilder(E).build()).meta, encodeFacts(new FactChunkBuilder(E).build()).data);
    expect(c.n).toBe(0);
  });

  it('given an instant, then its UTC day and the milliseconds into it', () => {
    expect(dayAndTime(new Date('2026-03-01T10:00:00.250Z'))).toEqual({ day: '2026-03-01', t: 36_000_250 });
    expect(dayAndTime(new Date('2026-03-01T23:59:59.999Z'))).toEqual({ day: '2026-03-01', t: 86_399_999 });
  });
});
