import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Runs a shell command with `shims` (a folder of stand-in programs) first on PATH; its exit code and output, failed
 * or not. For the tests of the scripts npm start and npm test run as root (apt-wait, build-web).
 */
export async function shWithShims(command: string, shims: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run('sh', ['-c', command], { env: { ...process.env, PATH: `${shims}:${process.env.PATH}`, ...env } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
