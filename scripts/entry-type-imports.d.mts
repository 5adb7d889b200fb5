// Types of scripts/entry-type-imports.mjs, for test/unit/api-report.test.ts.

/**
 * Rewrites the subpath entries' declarations in `outDir` to import the main entry's names from
 * 'nestjs-zk-lock'; returns one line per entry saying how many imports moved.
 */
export declare function linkEntryTypes(outDir: string): string[];
