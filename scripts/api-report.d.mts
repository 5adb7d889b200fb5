// Types of scripts/api-report.mjs, for test/unit/api-report.test.ts.

/** Each exported path of package.json, by its report name (api/<report>.api.md) and its built .d.ts. */
export declare const API_ENTRIES: readonly { readonly report: string; readonly dts: string }[];

/**
 * Runs API Extractor on every entry of `dist`. With `update`, rewrites the reports in `reports`;
 * else returns the entries whose public API differs from their report, with the line diff.
 */
export declare function runApiReports(options?: {
  update?: boolean;
  dist?: string;
  reports?: string;
  log?: (line: string) => void;
}): { entry: string; diff: string }[];

/** The lines only in `before` (`- `) and only in `after` (`+ `). */
export declare function lineDiff(before: string, after: string): string;
