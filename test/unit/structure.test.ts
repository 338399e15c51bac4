import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allTools } from '../../src/areas';

const ROOT = resolve(__dirname, '../..');

function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? tsFiles(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

/** Each relative import of a file: the folder it reaches (from the root) and whether only its types are imported. */
function importsOf(file: string): { target: string; typeOnly: boolean }[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(/^\s*(import|export)\s+(type\s+)?[^'";]*?from\s+'(\.[^']+)'/gm)].map((m) => ({
    target: relative(ROOT, resolve(join(ROOT, dirname(file)), m[3])),
    typeOnly: Boolean(m[2]),
  }));
}

/** The imports of `from` that reach one of `forbidden` (types too, unless `typesAllowed`): file → target. */
function upward(from: string, forbidden: string[], typesAllowed = false): string[] {
  return tsFiles(from).flatMap((f) =>
    importsOf(f)
      .filter((i) => !(typesAllowed && i.typeOnly) && forbidden.some((d) => i.target === d || i.target.startsWith(`${d}/`)))
      .map((i) => `${f} → ${i.target}`),
  );
}

describe('structure', () => {
  it('given the layers, then none imports from a layer above it', () => {
    expect(upward('src/mcp', ['src/http'])).toEqual([]);
    expect(upward('queries', ['src/http', 'src/mcp'])).toEqual([]);
    expect(upward('commands', ['src/app', 'src/http', 'src/mcp'])).toEqual([]);
    // the registry is the composition level: below it, only its types (a read model's name)
    for (const below of ['src/app', 'commands', 'queries', 'projections', 'src/workers', 'src/domain'])
      expect(upward(below, ['src/areas'], true), below).toEqual([]);
  });

  it('given the check of imports, then it finds an upward one, a type one, and one reached through ../', () => {
    expect(importsOf('src/app/context.ts')).toContainEqual({ target: 'src/areas', typeOnly: true });
    expect(importsOf('test/unit/structure.test.ts')).toContainEqual({ target: 'src/areas', typeOnly: false });
  });

  it('given the operations and the workers, then they read a read model only through queries/', () => {
    // a knex read of a read model's table by name (`db('rm_…')`); a worker's own statements that join one in SQL, to
    // claim or fan out in one statement, are its coordination, not a read
    const direct = ['src/app', 'src/workers'].flatMap((d) =>
      tsFiles(d).flatMap((f) =>
        readFileSync(join(ROOT, f), 'utf8')
          .split('\n')
          .flatMap((line, i) => (/\(\s*['"`]rm_\w+['"`]\s*\)/.test(line) ? [`${f}:${i + 1}`] : [])),
      ),
    );
    expect(direct).toEqual([]);
  });

  it('given the README, then a newcomer reads it in at most 250 lines', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(250);
  });

  it('given every MCP tool, then its description says what it does in at most 200 characters', () => {
    expect(allTools.length).toBeGreaterThan(50);
    expect(allTools.filter((t) => t.description.length > 200).map((t) => `${t.name} (${t.description.length})`)).toEqual([]);
  });
});
