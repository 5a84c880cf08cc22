/** Typed errors (house rule 3); one handler in app.ts maps them to { statusCode, error, message, code, reqId }. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}
export class BadRequest extends HttpError {
  constructor(message: string, code?: string) {
    super(400, message, code);
  }
}
export class Unauthorized extends HttpError {
  constructor(message = 'Sign in to continue.', code?: string) {
    super(401, message, code);
  }
}
export class Forbidden extends HttpError {
  constructor(message = 'You are not allowed to do that.', code?: string) {
    super(403, message, code);
  }
}
export class NotFound extends HttpError {
  constructor(message = 'Not found.', code?: string) {
    super(404, message, code);
  }
}
export class Conflict extends HttpError {
  constructor(message: string, code?: string) {
    super(409, message, code);
  }
}
export class TooMany extends HttpError {
  constructor(message = 'Too many requests, please try again later.', code?: string) {
    super(429, message, code);
  }
}
