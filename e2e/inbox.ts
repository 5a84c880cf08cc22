import { SMTPServer } from 'smtp-server';
import { freePort } from './harness';

export interface ReceivedMail {
  to: string[];
  raw: string;
}

export interface Inbox {
  /** `smtp://127.0.0.1:<port>`, for the server's SMTP_URL. */
  url: string;
  /** Every mail delivered so far, in arrival order. */
  mails: ReceivedMail[];
  close(): Promise<void>;
}

/** Undoes quoted-printable soft line breaks and escapes so assertions can search the message text. */
export function decodeQuotedPrintable(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

/**
 * A real SMTP server on loopback that keeps what it receives: the product's mail job delivers to it like to any
 * mail relay. `decode` turns each raw message into the text the test searches.
 */
export async function startInbox(decode: (raw: string) => string = (raw) => raw): Promise<Inbox> {
  const mails: ReceivedMail[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (d: string) => (raw += d));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: decode(raw) });
        callback();
      });
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve) => smtp.listen(port, '127.0.0.1', resolve));
  return { url: `smtp://127.0.0.1:${port}`, mails, close: () => new Promise<void>((resolve) => smtp.close(() => resolve())) };
}
