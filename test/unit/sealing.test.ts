import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { catalogue } from '../../src/domain/events';
import { compileSealing, erases, SealingDeclarationError, sealed, subject } from '../../src/domain/sealing';

const planOf = (schema: z.ZodType) => compileSealing({ T: schema }).get('T');

describe('declaring erasable fields', () => {
  it('given the event catalogue, then every declaration in it compiles', () => {
    expect(() => compileSealing(catalogue)).not.toThrow();
  });

  it('given a sealed field, then its type admits null (what an erased subject reads as)', () => {
    const s = z.object({ note_id: subject('note'), text: sealed(z.string()) });
    expect(s.parse({ note_id: 'n1', text: null })).toEqual({ note_id: 'n1', text: null });
    expect(s.safeParse({ note_id: 'n1', text: { $sealed: 'AQ==' } }).success).toBe(false);
  });

  it('given a sealed field with no subject around it, then the declaration is refused naming the field', () => {
    expect(() => planOf(z.object({ text: sealed(z.string()) }))).toThrow(
      new SealingDeclarationError("T.text: sealed field without a subject (mark its id with subject('<prefix>') in an enclosing object)"),
    );
  });

  it('given two subjects in one object, then a sealed field must name its own', () => {
    const two = { a_id: subject('a'), b_id: subject('b') };
    expect(() => planOf(z.object({ ...two, text: sealed(z.string()) }))).toThrow(/T\.text: several subject fields \(a_id, b_id\)/);
    const plan = planOf(z.object({ ...two, text: sealed(z.string(), { subject: 'b_id' }) }))!;
    const seen: string[] = [];
    plan.mapSealed({ a_id: '1', b_id: '2', text: 'x' }, (v, s) => (seen.push(s), v));
    expect(seen).toEqual(['b-2']);
    expect(() => planOf(z.object({ a_id: subject('a'), text: sealed(z.string(), { subject: 'c_id' }) }))).toThrow(
      /no enclosing subject field named c_id/,
    );
  });

  it('given an optional subject id, or a marker inside a union or a record, then the declaration is refused', () => {
    expect(() => planOf(z.object({ a_id: subject('a').optional(), text: sealed(z.string()) }))).toThrow(/T\.a_id: a subject id must be required/);
    expect(() => planOf(z.object({ a_id: subject('a'), v: z.union([sealed(z.string()), z.number()]) }))).toThrow(/T\.v: markers inside a union/);
    expect(() => planOf(z.object({ a_id: subject('a'), v: z.record(z.string(), sealed(z.string())) }))).toThrow(/T\.v: markers inside a record/);
    expect(() => subject('Bad Prefix')).toThrow(/subject prefix/);
  });

  it('given nested objects, then a sealed value takes the nearest subject, through arrays and optional wrappers', () => {
    const plan = planOf(
      z.object({
        doc_id: subject('doc'),
        title: sealed(z.string()),
        sections: z.array(z.object({ n: z.number(), body: sealed(z.string()) })),
        notes: z.array(z.object({ note_id: subject('note'), text: sealed(z.string()).optional() })).optional(),
      }),
    )!;
    expect(plan.sealedPaths).toEqual(['title', 'sections[].body', 'notes[].text']);
    const seen: [unknown, string][] = [];
    plan.mapSealed(
      {
        doc_id: 'd',
        title: 't',
        sections: [
          { n: 1, body: 'b1' },
          { n: 2, body: 'b2' },
        ],
        notes: [{ note_id: 'n1', text: 'x' }, { note_id: 'n2' }],
      },
      (v, s) => (seen.push([v, s]), v),
    );
    expect(seen).toEqual([
      ['t', 'doc-d'],
      ['b1', 'doc-d'],
      ['b2', 'doc-d'],
      ['x', 'note-n1'],
    ]);
  });

  it('given a mapping, then only the objects on the way to a changed value are copied, and unchanged data comes back as it is', () => {
    const plan = planOf(
      z.object({ doc_id: subject('doc'), plain: z.object({ a: z.number() }), sections: z.array(z.object({ body: sealed(z.string()) })) }),
    )!;
    const data = { doc_id: 'd', plain: { a: 1 }, sections: [{ body: 'x' }, { body: 'y' }] };
    expect(plan.mapSealed(data, (v) => v)).toBe(data);
    const out = plan.mapSealed(data, (v) => (v === 'x' ? 'X' : v)) as typeof data;
    expect(out).toEqual({ doc_id: 'd', plain: { a: 1 }, sections: [{ body: 'X' }, { body: 'y' }] });
    expect(out.plain).toBe(data.plain);
    expect(out.sections[1]).toBe(data.sections[1]);
    expect(data.sections[0].body).toBe('x');
  });

  it('given an erasing event, then the subjects it erases are its ids with their prefix, arrays included', () => {
    const plans = compileSealing({ One: z.object({ content_id: erases('content') }), Many: z.object({ fact_ids: z.array(erases('fact')) }) });
    expect(plans.get('One')!.erased({ content_id: 'c1' })).toEqual(['content-c1']);
    expect(plans.get('Many')!.erased({ fact_ids: ['f1', 'f2'] })).toEqual(['fact-f1', 'fact-f2']);
    expect(plans.get('Many')!.seals).toBe(false);
    expect(plans.get('Many')!.erases).toBe(true);
  });

  it('given types with no marker, then they have no plan (and cost nothing on the way in or out)', () => {
    const plans = compileSealing(catalogue);
    for (const t of ['ResponseRecorded', 'PromptCreated', 'UserAdded']) expect(plans.has(t)).toBe(false);
  });
});
