// Types of scripts/options-table.mjs, for test/unit/public-docs.test.ts.
import type ts from 'typescript';

export declare const ROOT: string;
export declare const ENTRIES: readonly string[];
export declare const DOC_FILES: readonly string[];
/** The command that rewrites the marked tables. */
export declare const REGENERATE: string;

export interface OptionProperty {
  readonly name: string;
  /** Declared in this package (not inherited from lib.d.ts or a dependency). */
  readonly ours: boolean;
  /** Optional on the type (a `Partial<...>` makes it so). */
  readonly optional: boolean;
  /** Declared with `?` where it is written. */
  readonly declaredOptional: boolean;
  /** The doc text, on one line (with any `@word` the compiler took for a tag). */
  readonly doc: string;
  /** `@word ...` pieces of the text that the compiler parsed as tags. */
  readonly strayTags: readonly string[];
  readonly tags: readonly { readonly name: string; readonly text: string }[];
  /** The `@default` text. */
  readonly default: string | undefined;
  /** One level down, for an options object of this package (`cohort`, `tls`). */
  readonly children: readonly OptionProperty[];
}

export interface OptionType {
  /** The public entry, as emitted (`index.d.ts`, `testing/index.d.ts` ...). */
  readonly entry: string;
  readonly name: string;
  readonly doc: string;
  readonly properties: readonly OptionProperty[];
}

export interface StaleDoc {
  readonly file: string;
  readonly current: string;
  readonly expected: string;
  /** The types whose tables differ. */
  readonly types: readonly string[];
}

export declare function buildConfig(): ts.ParsedCommandLine;
export declare function emitDeclarations(config: ts.ParsedCommandLine): Map<string, string>;
export declare function readOptionTypes(config: ts.ParsedCommandLine, declarations: Map<string, string>): OptionType[];
export declare function findUndocumented(types: readonly OptionType[]): string[];
export declare function renderTable(type: OptionType): string;
export declare function renderTables(types: readonly OptionType[]): Map<string, string>;
export declare function markedSections(text: string): { type: string; start: number; end: number }[];
export declare function renderDocument(text: string, tables: ReadonlyMap<string, string>): string;
export declare function staleDocs(tables: ReadonlyMap<string, string>, files?: readonly string[]): StaleDoc[];
