import { ContactAnswer } from '@hyperdesk/contract';
import { request } from './http';

/** Which popup sends the form: Contact Support on the FAQ page, Contact Us everywhere else (spec §7). */
export type ContactSource = 'contact' | 'support';

export interface ContactInput {
  name: string;
  email: string;
  query: string;
  captcha: string;
  source: ContactSource;
}

/** The form-mail call: a multipart POST with the spec's field names (name, email, Query). */
export function sendContact(input: ContactInput) {
  const form = new FormData();
  form.append('name', input.name);
  form.append('email', input.email);
  form.append('Query', input.query);
  form.append('captcha', input.captcha);
  form.append('source', input.source);
  return request('POST', '/v1/contact', { form, schema: ContactAnswer });
}
