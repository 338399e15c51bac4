import { describe, expect, it } from 'vitest';
import { buildJudgePrompt, createLlmJudge, type JudgeInput, locateSpan, parseJudgeReply } from '../../src/analysis/observation-judge';
import { type AnswerEngine, type AnswerRequest, EngineError } from '../../src/engines/port';

// Given: an answer about Acme (the brand) and Globex, and the traits the website watches.
const ANSWER =
  'Acme is often recommended for its value for money. Globex stands out for customer support, though pricing can be a concern.\n' +
  '- Acme’s support is slow  to respond.';
const INPUT: JudgeInput = {
  text: ANSWER,
  entities: [
    { id: 'e-acme', name: 'Acme', is_self: true },
    { id: 'e-globex', name: 'Globex', is_self: false },
  ],
  attributes: [
    { id: 'a-price', name: 'Price', description: 'How affordable the product is said to be' },
    { id: 'a-support', name: 'Support', description: null },
  ],
  day: '2025-03-14',
};

/** A fake engine answering with canned texts, recording what it was asked. */
function fakeEngine(...replies: Array<string | Error>): AnswerEngine & { asked: AnswerRequest[] } {
  const asked: AnswerRequest[] = [];
  return {
    asked,
    async ask(req) {
      asked.push(req);
      const r = replies[Math.min(asked.length - 1, replies.length - 1)];
      if (r instanceof Error) throw r;
      return { text: r, citations: [], products: [], usage: { credits: 1 }, provider_model: 'fake', latency_ms: 1 };
    },
  };
}

function judgeWith(...replies: Array<string | Error>) {
  const engine = fakeEngine(...replies);
  const warnings: Array<{ message: string; detail?: Record<string, unknown> }> = [];
  const judge = createLlmJudge(engine, 'gpt-4o-mini', { onWarning: (message, detail) => warnings.push({ message, detail }) });
  return { engine, warnings, judge };
}

const GOOD = JSON.stringify([
  { entity: 'Acme', attribute: 'Price', positive: true, score: 0.6, text_span: 'Acme is often recommended for its value for money.' },
  { entity: 'Globex', attribute: 'Support', positive: true, score: 0.7, text_span: 'Globex stands out for customer support' },
  { entity: 'Globex', attribute: 'Price', positive: false, score: -0.3, text_span: 'pricing can be a concern' },
]);

describe('the LLM observation judge', () => {
  it('given a reply of good JSON, when extracted, then observations with ids, in text order, and one ask with model, prompt and day', async () => {
    const { engine, warnings, judge } = judgeWith(GOOD);
    const obs = await judge.extract(INPUT);
    expect(obs).toEqual([
      { entity_id: 'e-acme', attribute_id: 'a-price', positive: true, score: 0.6, text_span: 'Acme is often recommended for its value for money.' },
      { entity_id: 'e-globex', attribute_id: 'a-support', positive: true, score: 0.7, text_span: 'Globex stands out for customer support' },
      { entity_id: 'e-globex', attribute_id: 'a-price', positive: false, score: -0.3, text_span: 'pricing can be a concern' },
    ]);
    expect(warnings).toEqual([]);
    expect(engine.asked).toHaveLength(1);
    expect(engine.asked[0].model).toBe('gpt-4o-mini');
    expect(engine.asked[0].day).toBe('2025-03-14');
    const prompt = engine.asked[0].prompt;
    expect(prompt).toBe(buildJudgePrompt(INPUT));
    expect(prompt).toContain(ANSWER);
    expect(prompt).toContain('- Acme (the brand)');
    expect(prompt).toContain('- Globex (a competitor)');
    expect(prompt).toContain('- Price: How affordable the product is said to be');
    expect(prompt).toMatch(/ONLY a JSON array/);
  });

  it('given an onUsage callback, when extracted, then it receives the engine usage of the call', async () => {
    const usages: unknown[] = [];
    const judge = createLlmJudge(fakeEngine(GOOD), 'gpt-4o-mini', { onUsage: (usage, providerModel) => usages.push({ usage, providerModel }) });
    await judge.extract(INPUT);
    expect(usages).toEqual([{ usage: { credits: 1 }, providerModel: 'fake' }]);
  });

  it('given a fenced JSON reply with prose around it, when extracted, then the fenced array is used', async () => {
    const { judge, warnings } = judgeWith(`Here are the observations:\n\n\`\`\`json\n${GOOD}\n\`\`\`\nLet me know if you need more.`);
    expect(await judge.extract(INPUT)).toHaveLength(3);
    expect(warnings).toEqual([]);
    const { judge: bare } = judgeWith(`\`\`\`\n${GOOD}\n\`\`\``);
    expect(await bare.extract(INPUT)).toHaveLength(3);
    const { judge: wrapped } = judgeWith(JSON.stringify({ observations: JSON.parse(GOOD) }));
    expect(await wrapped.extract(INPUT)).toHaveLength(3);
  });

  it('given names in another case or unknown names, when extracted, then known names map to ids and unknown ones are dropped with a warning', async () => {
    const { judge, warnings } = judgeWith(
      JSON.stringify([
        { entity: ' acme ', attribute: 'PRICE', positive: true, score: 0.6, text_span: 'value for money' },
        { entity: 'Initech', attribute: 'Price', positive: true, score: 0.6, text_span: 'value for money' },
        { entity: 'Acme', attribute: 'Durability', positive: true, score: 0.6, text_span: 'value for money' },
        { entity: 42, attribute: 'Price', positive: true, score: 0.6, text_span: 'value for money' },
      ]),
    );
    expect(await judge.extract(INPUT)).toEqual([
      { entity_id: 'e-acme', attribute_id: 'a-price', positive: true, score: 0.6, text_span: 'value for money' },
    ]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0].detail).toMatchObject({ unknown_entity: 2, unknown_attribute: 1 });
  });

  it.each([
    { score: 0.5, positive: false, then: null }, // sign disagrees
    { score: 0, positive: true, then: null },
    { score: 1.5, positive: true, then: null },
    { score: 0.05, positive: true, then: null },
    { score: '0.5', positive: true, then: null },
    { score: null, positive: true, then: null },
    { score: undefined, positive: false, then: null },
    { score: 0.66666, positive: true, then: 0.667 },
  ])('given score $score with positive $positive, when extracted, then the item is kept with score $then', async ({ score, positive, then }) => {
    const { judge } = judgeWith(JSON.stringify([{ entity: 'Acme', attribute: 'Price', positive, score, text_span: 'value for money' }]));
    expect(await judge.extract(INPUT)).toEqual([
      { entity_id: 'e-acme', attribute_id: 'a-price', positive, score: then, text_span: 'value for money' },
    ]);
  });

  it('given a span that is not in the answer, when extracted, then the item is dropped; a span differing only in spaces or quotes is kept as the answer writes it', async () => {
    const { judge, warnings } = judgeWith(
      JSON.stringify([
        { entity: 'Acme', attribute: 'Price', positive: true, score: 0.6, text_span: 'Acme is the cheapest option on the market.' },
        { entity: 'Acme', attribute: 'Support', positive: false, score: -0.6, text_span: "Acme's support is slow to respond." },
        { entity: 'Acme', attribute: 'Price', positive: true, score: 0.6, text_span: '' },
      ]),
    );
    expect(await judge.extract(INPUT)).toEqual([
      { entity_id: 'e-acme', attribute_id: 'a-support', positive: false, score: -0.6, text_span: 'Acme’s support is slow  to respond.' },
    ]);
    expect(warnings[0].detail).toMatchObject({ span_not_in_text: 2 });
  });

  it('given a missing positive, when extracted, then a valid score decides it; without either the item is dropped', async () => {
    const { judge } = judgeWith(
      JSON.stringify([
        { entity: 'Globex', attribute: 'Price', score: -0.3, text_span: 'pricing can be a concern' },
        { entity: 'Globex', attribute: 'Support', text_span: 'customer support' },
      ]),
    );
    expect(await judge.extract(INPUT)).toEqual([
      { entity_id: 'e-globex', attribute_id: 'a-price', positive: false, score: -0.3, text_span: 'pricing can be a concern' },
    ]);
  });

  it.each(['I could not find any observations.', '{"entity": "Acme"}', '[{"entity": "Acme", "attribute": ', '', '```json\nnot json\n```'])(
    'given a malformed reply %j, when extracted, then [] and a warning, no throw',
    async (reply) => {
      const { judge, warnings } = judgeWith(reply);
      expect(await judge.extract(INPUT)).toEqual([]);
      expect(warnings).toHaveLength(1);
      expect(warnings[0].message).toMatch(/no JSON array/);
    },
  );

  it('given an empty array, when extracted, then [] without a warning', async () => {
    const { judge, warnings } = judgeWith('[]');
    expect(await judge.extract(INPUT)).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it('given non-object items and duplicates, when extracted, then they are dropped or kept once', async () => {
    const item = { entity: 'Acme', attribute: 'Price', positive: true, score: 0.6, text_span: 'value for money' };
    const { judge, warnings } = judgeWith(JSON.stringify([item, 'Acme', null, [1], item]));
    expect(await judge.extract(INPUT)).toHaveLength(1);
    expect(warnings[0].detail).toMatchObject({ malformed: 3 });
  });

  it('given an engine error, when extracted, then it propagates', async () => {
    const { judge } = judgeWith(new EngineError('rate_limited', 'slow down'));
    await expect(judge.extract(INPUT)).rejects.toBeInstanceOf(EngineError);
  });

  it('given no entities, no attributes or no text, when extracted, then [] without asking the engine', async () => {
    const { judge, engine } = judgeWith(GOOD);
    expect(await judge.extract({ ...INPUT, entities: [] })).toEqual([]);
    expect(await judge.extract({ ...INPUT, attributes: [] })).toEqual([]);
    expect(await judge.extract({ ...INPUT, text: '  ' })).toEqual([]);
    expect(engine.asked).toHaveLength(0);
  });

  it('given a throwing onWarning, when a reply is malformed, then extract still returns []', async () => {
    const judge = createLlmJudge(fakeEngine('garbage'), 'gpt-4o-mini', {
      onWarning: () => {
        throw new Error('logger down');
      },
    });
    expect(await judge.extract(INPUT)).toEqual([]);
    expect(await createLlmJudge(fakeEngine('garbage'), 'gpt-4o-mini').extract(INPUT)).toEqual([]);
  });
});

describe('judge helpers', () => {
  it('parseJudgeReply: fenced, bare, wrapped, or undefined', () => {
    expect(parseJudgeReply('[1]')).toEqual([1]);
    expect(parseJudgeReply('Sure! ```json\n[{"a":1}]\n``` done')).toEqual([{ a: 1 }]);
    expect(parseJudgeReply('prefix [ {"a": [1, 2]} ] suffix')).toEqual([{ a: [1, 2] }]);
    expect(parseJudgeReply('{"observations": []}')).toEqual([]);
    expect(parseJudgeReply('nothing here')).toBeUndefined();
    expect(parseJudgeReply('{"a": 1}')).toBeUndefined();
  });

  it('locateSpan: verbatim, else loose about spaces and quotes; null when absent', () => {
    const text = 'It’s  fast.\nReally fast.';
    expect(locateSpan(text, 'fast.')).toEqual([6, 11]);
    const [start, end] = locateSpan(text, "It's fast. Really")!;
    expect(text.slice(start, end)).toBe('It’s  fast.\nReally');
    expect(locateSpan(text, 'slow')).toBeNull();
  });
});
