/** Command-line options of `npm run bench -- ...`. */
export interface BenchArgs {
  quick: boolean;
  only: string[] | undefined;
  curator: boolean;
  /** Write the tables into docs/benchmarks.md (default: only for a full run of every workload). */
  writeMarkdown: boolean | undefined;
  list: boolean;
  /** Minutes to wait, at most, for the CPUs to be quiet before starting (0: do not wait). */
  waitQuietMinutes: number;
}

export const USAGE = `usage: npm run bench -- [--quick] [--only id,id] [--no-curator] [--markdown|--no-markdown] [--wait-quiet[=min]] [--list]
  --quick          short runs: a smoke check of every workload in about two minutes, figures not worth comparing
  --only a,b       run only these workloads (see --list)
  --no-curator     skip the Curator baseline (ratios against it are then not measured)
  --markdown       write the tables into docs/benchmarks.md even for a partial or quick run
  --no-markdown    never touch docs/benchmarks.md (a full run writes it by default)
  --wait-quiet[=m] on a shared machine: first wait (up to m minutes, default 15) until the CPUs have been
                   mostly idle for 10 s in a row
  --list           list the workloads and exit`;

export function parseArgs(argv: readonly string[]): BenchArgs {
  const args: BenchArgs = { quick: false, only: undefined, curator: true, writeMarkdown: undefined, list: false, waitQuietMinutes: 0 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    switch (flag) {
      case '--quick':
        args.quick = true;
        break;
      case '--only': {
        const value = inline ?? argv[++i];
        if (!value) throw new Error(`--only needs a list of workloads\n${USAGE}`);
        args.only = value.split(',').map((s) => s.trim()).filter(Boolean);
        break;
      }
      case '--no-curator':
        args.curator = false;
        break;
      case '--markdown':
        args.writeMarkdown = true;
        break;
      case '--no-markdown':
        args.writeMarkdown = false;
        break;
      case '--wait-quiet': {
        const minutes = inline === undefined ? 15 : Number(inline);
        if (!Number.isFinite(minutes) || minutes <= 0) throw new Error(`--wait-quiet takes a number of minutes\n${USAGE}`);
        args.waitQuietMinutes = minutes;
        break;
      }
      case '--list':
        args.list = true;
        break;
      case '--help':
      case '-h':
        console.log(USAGE);
        process.exit(0);
        break;
      default:
        throw new Error(`unknown option ${arg}\n${USAGE}`);
    }
  }
  return args;
}
