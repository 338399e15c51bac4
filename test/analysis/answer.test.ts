import { describe, expect, it } from 'vitest';
import { analyzeAnswer, analyzeProducts, compileEntities, type EntityInput } from '../../src/analysis/answer';

// Given: a website (Acme) and its competitors, compiled once for every case below.
const CATALOGUE: EntityInput[] = [
  { id: 'acme', name: 'Acme', is_self: true, identifiers: ['ACME Corp', 'AcmeHQ'], url: 'https://www.acme.com/' },
  { id: 'acme-pro', name: 'Acme Pro', is_self: false, identifiers: [], url: 'https://acmepro.io' },
  { id: 'initech', name: 'Initech', is_self: false, identifiers: [], url: 'https://init-tech.com/en' },
  { id: 'att', name: 'AT&T', is_self: false, identifiers: [], url: 'https://www.att.com' },
  { id: 'bj', name: "Ben & Jerry's", is_self: false, identifiers: [], url: 'https://www.benjerry.com' },
  { id: 'c3', name: 'C3.ai', is_self: false, identifiers: [], url: 'https://c3.ai' },
  { id: 'monday', name: 'monday.com', is_self: false, identifiers: [], url: 'https://monday.com' },
  { id: 'mueller', name: 'Müller', is_self: false, identifiers: [], url: 'https://www.mueller.de' },
  { id: 'cafe', name: 'Café Société', is_self: false, identifiers: [], url: null },
  { id: 'tencent', name: '腾讯', is_self: false, identifiers: ['Tencent'], url: 'https://tencent.com' },
  { id: 'samsung', name: '삼성', is_self: false, identifiers: [], url: '' },
  { id: 'shop', name: 'Acme Shop', is_self: false, identifiers: [], url: 'https://shop.acme.com' },
];
const compiled = compileEntities(CATALOGUE);

const mentioned = (text: string) => analyzeAnswer(compiled, { text }).mentions.map((m) => m.entity_id);
const positions = (text: string) => Object.fromEntries(analyzeAnswer(compiled, { text }).mentions.map((m) => [m.entity_id, m.position]));

describe('mentions: whole words, case-insensitive', () => {
  it.each([
    // when the answer says …                               then it mentions
    { text: 'Acmeville is a town', then: [] },
    { text: 'pacme and acme2 and acme_x and Acme2000', then: [] },
    { text: 'Acme is good', then: ['acme'] },
    { text: 'ACME is good', then: ['acme'] },
    { text: 'try aCmE.', then: ['acme'] },
    { text: "Acme's plans", then: ['acme'] },
    { text: '**Acme** (Acme-powered)', then: ['acme'] },
    { text: '1. Acme\n2. none', then: ['acme'] },
    { text: 'talk to acme corp', then: ['acme'] },
    { text: 'AcmeHQ announced', then: ['acme'] },
    { text: 'AcmeHQs announced', then: [] },
  ])('"$text" → $then', ({ text, then }) => {
    expect(mentioned(text)).toEqual(then);
  });
});

describe('mentions: names with punctuation and other scripts', () => {
  it.each([
    { text: 'AT&T and at&t’s network', then: ['att'] },
    { text: 'AT&Tx', then: [] },
    { text: "I like Ben & Jerry's", then: ['bj'] },
    { text: 'I like ben & jerry’s (curly apostrophe)', then: ['bj'] },
    { text: "Ben  &\nJerry's over two lines", then: ['bj'] },
    { text: 'Ben & Jerry alone', then: [] },
    { text: 'C3.ai and c3.ai’s platform', then: ['c3'] },
    { text: 'C3.aix', then: [] },
    { text: 'Monday.com vs Asana', then: ['monday'] },
    { text: 'see you on Monday, bye', then: [] },
    { text: 'Müller or MÜLLER', then: ['mueller'] },
    { text: 'Müllerstraße 5', then: [] },
    { text: 'the CAFÉ SOCIÉTÉ menu', then: ['cafe'] },
    { text: 'Cafe\u0301 Socie\u0301te\u0301 (decomposed accents)', then: ['cafe'] },
    { text: 'Société alone', then: [] },
    { text: '我喜欢腾讯的产品', then: ['tencent'] },
    { text: '我用Acme产品', then: ['acme'] },
    { text: '삼성은 좋다', then: ['samsung'] },
  ])('"$text" → $then', ({ text, then }) => {
    expect(mentioned(text)).toEqual(then);
  });
});

describe('mentions: domains in the text', () => {
  it.each([
    { text: 'visit init-tech.com today', then: ['initech'] },
    { text: 'pricing at www.init-tech.com/pricing.', then: ['initech'] },
    { text: 'https://INIT-TECH.COM', then: ['initech'] },
    { text: 'docs.init-tech.com has it', then: ['initech'] },
    { text: 'write to sales@init-tech.com', then: ['initech'] },
    { text: 'my-init-tech.com is a fake', then: [] },
    { text: 'init-tech.com.evil.net is a fake', then: [] },
    { text: 'init-tech.community is not it', then: [] },
    { text: 'init-tech.comx is not it', then: [] },
  ])('"$text" → $then', ({ text, then }) => {
    expect(mentioned(text)).toEqual(then);
  });
});

describe('mentions: overlapping names (the longest match at a position wins)', () => {
  it.each([
    { text: 'Acme Pro is great', then: { 'acme-pro': 1 } },
    { text: 'Acme Product line', then: { acme: 1 } },
    { text: 'Acme Pro beats Acme', then: { 'acme-pro': 1, acme: 2 } },
    { text: 'Acme beats Acme Pro', then: { acme: 1, 'acme-pro': 2 } },
    { text: 'acme   pro', then: { 'acme-pro': 1 } },
    { text: 'Acme Shop sells Acme Pro', then: { shop: 1, 'acme-pro': 2 } },
  ])('"$text" → $then', ({ text, then }) => {
    expect(positions(text)).toEqual(then);
  });

  it('a term shared by two entities mentions both, tied at the same position', () => {
    const c = compileEntities([
      { id: 'a', name: 'Alpha', is_self: true, identifiers: ['Nova'], url: 'https://alpha.com' },
      { id: 'b', name: 'Beta', is_self: false, identifiers: ['nova'], url: 'https://beta.com' },
      { id: 'g', name: 'Gamma', is_self: false, identifiers: [], url: 'https://gamma.com' },
    ]);
    expect(analyzeAnswer(c, { text: 'Gamma and NOVA, then Alpha' }).mentions).toEqual([
      { entity_id: 'g', position: 1, first_index: 0 },
      { entity_id: 'a', position: 2, first_index: 10 },
      { entity_id: 'b', position: 2, first_index: 10 },
    ]);
    expect(analyzeAnswer(c, { text: 'Nova then Gamma' }).mentions.map((m) => [m.entity_id, m.position])).toEqual([
      ['a', 1],
      ['b', 1],
      ['g', 3],
    ]);
  });
});

describe('positions: first occurrence decides, among all entities', () => {
  it('repeated mentions count once, at their first occurrence', () => {
    expect(analyzeAnswer(compiled, { text: 'Initech, then Acme, then Initech again, then AT&T, Acme.' }).mentions).toEqual([
      { entity_id: 'initech', position: 1, first_index: 0 },
      { entity_id: 'acme', position: 2, first_index: 14 },
      { entity_id: 'att', position: 3, first_index: 45 },
    ]);
  });

  it('an answer mentioning nothing has no mentions', () => {
    expect(analyzeAnswer(compiled, { text: 'There are many good vendors; pick one you like.' }).mentions).toEqual([]);
  });

  it('positions count every tracked entity (a subset of competitors is selected later, never renumbered)', () => {
    expect(positions('Monday.com, C3.ai, then Acme')).toEqual({ monday: 1, c3: 2, acme: 3 });
  });
});

describe('sources and citations', () => {
  const sourcesOf = (citations: string[], text = '') => analyzeAnswer(compiled, { text, citations });

  it.each([
    // cited URL                              entity_id    cited
    { url: 'https://acme.com/pricing', owner: 'acme', cited: ['acme'] },
    { url: 'https://blog.acme.com/post', owner: 'acme', cited: ['acme'] },
    { url: 'https://www.acme.com', owner: 'acme', cited: ['acme'] },
    { url: 'https://acme.com.evil.net/acme', owner: null, cited: [] },
    { url: 'https://notacme.com/', owner: null, cited: [] },
    { url: 'https://shop.acme.com/cart', owner: 'shop', cited: ['shop', 'acme'] },
    { url: 'https://eu.shop.acme.com/cart', owner: 'shop', cited: ['shop', 'acme'] },
    { url: 'https://init-tech.com/blog', owner: 'initech', cited: ['initech'] },
    { url: 'https://g2.com/compare/acme-vs-initech', owner: null, cited: [] },
  ])('$url → entity $owner, cites $cited', ({ url, owner, cited }) => {
    const a = sourcesOf([url]);
    expect(a.sources.map((s) => s.entity_id)).toEqual([owner]);
    expect(a.cited_entity_ids).toEqual(cited);
  });

  it('www., scheme, fragment and tracking-parameter variants collapse to the first one', () => {
    const a = sourcesOf([
      'https://www.acme.com/pricing?utm_source=chatgpt&plan=pro',
      'http://acme.com/pricing/?plan=pro#faq',
      'acme.com/pricing?gclid=1&plan=pro',
    ]);
    expect(a.sources).toEqual([
      {
        url: 'https://www.acme.com/pricing?utm_source=chatgpt&plan=pro',
        normalized_url: 'acme.com/pricing?plan=pro',
        host: 'acme.com',
        root_domain: 'acme.com',
        suffix: 'com',
        entity_id: 'acme',
      },
    ]);
  });

  it('URLs in the text follow the engine citations, trailing punctuation trimmed, duplicates dropped', () => {
    const a = sourcesOf(
      ['https://www.g2.com/products/acme', 'not a url', ''],
      'Compare (see https://init-tech.com/compare). Also https://g2.com/products/acme, and www.bbc.co.uk/news/tech!',
    );
    expect(a.sources.map((s) => [s.url, s.normalized_url, s.root_domain, s.suffix, s.entity_id])).toEqual([
      ['https://www.g2.com/products/acme', 'g2.com/products/acme', 'g2.com', 'com', null],
      ['https://init-tech.com/compare', 'init-tech.com/compare', 'init-tech.com', 'com', 'initech'],
      ['www.bbc.co.uk/news/tech', 'bbc.co.uk/news/tech', 'bbc.co.uk', 'co.uk', null],
    ]);
    expect(a.cited_entity_ids).toEqual(['initech']);
  });

  it('citing is independent of mentioning', () => {
    const a = sourcesOf(['https://c3.ai/platform'], 'Nothing named here.');
    expect(a.mentions).toEqual([]);
    expect(a.cited_entity_ids).toEqual(['c3']);
  });
});

describe('empty inputs', () => {
  it('an empty answer has nothing', () => {
    expect(analyzeAnswer(compiled, { text: '', citations: [] })).toEqual({ mentions: [], sources: [], cited_entity_ids: [] });
    expect(analyzeAnswer(compiled, { text: '', citations: null })).toEqual({ mentions: [], sources: [], cited_entity_ids: [] });
  });

  it('a website without entities mentions and cites nobody, sources still listed', () => {
    const none = compileEntities([]);
    const a = analyzeAnswer(none, { text: 'Acme at https://acme.com', citations: ['https://g2.com'] });
    expect(a.mentions).toEqual([]);
    expect(a.cited_entity_ids).toEqual([]);
    expect(a.sources.map((s) => s.normalized_url)).toEqual(['g2.com/', 'acme.com/']);
  });

  it('blank or punctuation-only names and identifiers match nothing', () => {
    const c = compileEntities([{ id: 'x', name: '  ', is_self: true, identifiers: ['&', '-', ''], url: null }]);
    expect(analyzeAnswer(c, { text: 'a & b - c   ' }).mentions).toEqual([]);
  });
});

describe('product cards', () => {
  it.each([
    // given the card …                                                        then
    { card: { name: 'Blender 3000', brand: 'Acme', position: 1 }, entity: 'acme', by: 'brand', own: true },
    { card: { name: 'Blender 3000', brand: 'ACME Corp.', position: 1 }, entity: 'acme', by: 'brand', own: true },
    { card: { name: 'Acme Pro Blender', position: 2 }, entity: 'acme-pro', by: 'name', own: false },
    { card: { name: 'Case for Acme Pro', brand: 'Generic', position: 3 }, entity: null, by: null, own: false },
    { card: { name: 'Acmeville souvenir', position: 4 }, entity: null, by: null, own: false },
  ])('$card.name / $card.brand → $entity', ({ card, entity, by, own }) => {
    const [row] = analyzeProducts(compiled, [card]);
    expect([row.entity_id, row.matched_by, row.is_own]).toEqual([entity, by, own]);
  });

  it('normalizes merchant, currency, price and URL', () => {
    const rows = analyzeProducts(compiled, [
      {
        name: ' Blender ',
        brand: 'Initech',
        merchant: 'Amazon.com',
        price: 99.5,
        currency: 'usd',
        position: 1,
        url: 'https://www.amazon.com/dp/B1?utm_source=x',
      },
      { name: 'Blender', merchant: '  Best   Buy ', price: Number.NaN, position: 2 },
      { name: 'Blender', position: 3, url: 'https://www.walmart.com/ip/1' },
    ]);
    expect(rows).toEqual([
      {
        position: 1,
        name: 'Blender',
        brand: 'Initech',
        merchant: 'Amazon.com',
        merchant_key: 'amazon.com',
        price: 99.5,
        currency: 'USD',
        url: 'https://www.amazon.com/dp/B1?utm_source=x',
        normalized_url: 'amazon.com/dp/B1',
        host: 'amazon.com',
        entity_id: 'initech',
        matched_by: 'brand',
        is_own: false,
      },
      {
        position: 2,
        name: 'Blender',
        brand: null,
        merchant: 'Best   Buy',
        merchant_key: 'best buy',
        price: null,
        currency: null,
        url: null,
        normalized_url: null,
        host: null,
        entity_id: null,
        matched_by: null,
        is_own: false,
      },
      {
        position: 3,
        name: 'Blender',
        brand: null,
        merchant: null,
        merchant_key: 'walmart.com',
        price: null,
        currency: null,
        url: 'https://www.walmart.com/ip/1',
        normalized_url: 'walmart.com/ip/1',
        host: 'walmart.com',
        entity_id: null,
        matched_by: null,
        is_own: false,
      },
    ]);
  });

  it('leaves no state behind: an answer analysed after cards is analysed as on its own', () => {
    analyzeProducts(compiled, [{ name: 'Acme Pro', brand: 'Initech', position: 1 }]);
    expect(analyzeAnswer(compiled, { text: 'AT&T only' }).mentions).toEqual([{ entity_id: 'att', position: 1, first_index: 0 }]);
  });

  it('no cards, no rows', () => {
    expect(analyzeProducts(compiled, [])).toEqual([]);
  });
});
