// How a command reads a password: from a terminal, asked without echo (twice when it sets one, so
// that a typo is caught), or from stdin when it is not a terminal (a pipe, a file, a test): its
// first line. Never from a flag: a command line is seen by every user of the machine (ps).

import { UsageError, io } from './common.js';

/** The password: asked on the terminal (twice when `confirm`), or stdin's first line. */
export async function readPassword(prompt: string, confirm: boolean): Promise<string> {
  const input = io.stdin;
  if (!input.isTTY) {
    // (a stdin that holds nothing — cron, CI, < /dev/null — gave no password, not an empty one)
    const line = await firstLine(input);
    if (line === undefined) throw new UsageError('stdin ended before a password: type it on a terminal, or send it as the first line of stdin');
    return line;
  }
  const tty = input as NodeJS.ReadStream;
  const first = await ask(prompt, tty);
  if (!confirm) return first;
  const again = await ask('the same again: ', tty);
  if (again !== first) throw new UsageError('the two passwords differ: nothing was changed');
  return first;
}

/** Stdin's first line; undefined when it ended with nothing in it. */
async function firstLine(input: NodeJS.ReadableStream): Promise<string | undefined> {
  let text = '';
  for await (const chunk of input) {
    text += String(chunk);
    const nl = text.indexOf('\n');
    if (nl >= 0) return text.slice(0, nl).replace(/\r$/, '');
    if (text.length > 1 << 16) break;
  }
  return text === '' ? undefined : text;
}

/** One line typed on the terminal, not shown (raw mode: each key read as it comes). */
function ask(prompt: string, input: NodeJS.ReadStream): Promise<string> {
  io.stderr.write(prompt);
  return new Promise((resolve, reject) => {
    let typed = '';
    input.setRawMode(true);
    input.resume();
    const done = (error?: Error) => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      io.stderr.write('\n');
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (data: Buffer) => {
      for (const ch of data.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003') return done(new UsageError('interrupted: nothing was changed'));
        if (ch === '\u007f' || ch === '\b') typed = [...typed].slice(0, -1).join('');
        else typed += ch;
      }
    };
    input.on('data', onData);
  });
}
