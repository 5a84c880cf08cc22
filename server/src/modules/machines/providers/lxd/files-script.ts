/**
 * The program the server runs inside a desktop (python3 -c, as the desktop's user, uid 1000) to list, write and read
 * files of the home. Arguments arrive as argv (never through a shell); the answer is one JSON line on stdout (for
 * `get`, the line comes first and the file's bytes follow). Errors are named by errno so the server can say what
 * happened: a full quota (EDQUOT/ENOSPC), a place the user may not write (EACCES, EPERM, EROFS)…
 *
 * `put` writes into a hidden part file created with O_EXCL|O_NOFOLLOW beside the destination, checks it received
 * exactly the announced size, makes it durable (syncfs: on btrfs this also commits it into the home's quota figures,
 * so the Files panel's "used" counts it at once), then hard-links it under the first free name ("a.txt",
 * "a (1).txt"…): an existing name, even a link the tenant planted, is never opened or overwritten. SIGTERM (the
 * client went away) removes the part file. The file carries the upload's mark (a random token from the server, in the
 * xattr user.hyperdesk.upload) so that `found` can name it when LXD lost the put's answer: a file the tenant marks
 * the same way only misleads its own upload's message.
 */
export const FILES_SCRIPT = String.raw`
import errno, json, os, signal, stat, sys
HOME = os.environ.get('HOME') or '/home/user'
MARK = 'user.hyperdesk.upload'
CODES = {errno.EDQUOT: 'quota', errno.ENOSPC: 'quota', errno.EACCES: 'permission', errno.EPERM: 'permission',
         errno.EROFS: 'permission', errno.ELOOP: 'permission', errno.ENOENT: 'not-found', errno.ENOTDIR: 'not-a-folder',
         errno.EISDIR: 'not-a-file'}

def answer(o):
    sys.stdout.buffer.write((json.dumps(o) + '\n').encode())
    sys.stdout.buffer.flush()

def fail(code, detail=''):
    answer({'error': code, 'detail': detail})
    sys.exit(3)

def inside(rel):
    if rel.startswith('/') or any(s in ('', '.', '..') for s in rel.split('/')) and rel != '':
        fail('not-found')
    return os.path.join(HOME, rel) if rel else HOME

class Stop(Exception):
    pass

def stop(*_):
    raise Stop()

def listing(rel, most):
    entries, more = [], 0
    with os.scandir(inside(rel)) as it:
        for e in it:
            if len(entries) >= most:
                more += 1
                continue
            try:
                st = e.stat()
            except OSError:
                continue
            entries.append({'name': e.name, 'folder': stat.S_ISDIR(st.st_mode), 'size': st.st_size, 'mtime': int(st.st_mtime)})
    answer({'entries': entries, 'more': more})

def candidates(name):
    stem, ext = os.path.splitext(name)
    if not stem:
        stem, ext = name, ''
    yield name
    for i in range(1, 1000):
        yield '%s (%d)%s' % (stem, i, ext)

def syncfs(fd):
    import ctypes
    if ctypes.CDLL(None, use_errno=True).syncfs(fd) != 0:
        raise OSError(ctypes.get_errno(), 'syncfs')

def mark(fd, token):
    try:
        os.setxattr(fd, MARK, token.encode())
    except OSError as e:
        if e.errno not in (errno.ENOTSUP, errno.EOPNOTSUPP):
            raise

def put(rel, name, size, token):
    path = inside(rel)
    os.makedirs(path, exist_ok=True)
    d = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    part = '.upload-%d.part' % os.getpid()
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=d)
    try:
        got, src = 0, sys.stdin.buffer.raw
        while True:
            chunk = src.read(1 << 20)
            if not chunk:
                break
            got += len(chunk)
            if got > size:
                fail('incomplete', 'more bytes than announced')
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view):]
        if got != size:
            fail('incomplete', '%d of %d bytes' % (got, size))
        mark(fd, token)
        syncfs(fd)
        os.close(fd)
        fd = -1
        for cand in candidates(name):
            try:
                os.link(part, cand, src_dir_fd=d, dst_dir_fd=d, follow_symlinks=False)
                answer({'name': cand, 'size': got})
                return
            except FileExistsError:
                continue
        fail('io', 'no free name')
    finally:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(part, dir_fd=d)
        except OSError:
            pass

def found(rel, name, token):
    d = os.open(inside(rel), os.O_RDONLY | os.O_DIRECTORY)
    for cand in candidates(name):
        try:
            fd = os.open(cand, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=d)
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode) and os.getxattr(fd, MARK) == token.encode():
                answer({'name': cand, 'size': st.st_size})
                return
        except OSError:
            pass
        finally:
            os.close(fd)
    fail('not-found', "no file with this upload's mark")

def get(rel):
    fd = os.open(inside(rel), os.O_RDONLY | os.O_NONBLOCK)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        fail('not-a-file')
    os.set_blocking(fd, True)
    answer({'name': os.path.basename(rel), 'size': st.st_size})
    left, out = st.st_size, sys.stdout.buffer
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        out.write(chunk)
        left -= len(chunk)
    out.flush()

signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
try:
    mode = sys.argv[1]
    if mode == 'list':
        listing(sys.argv[2], int(sys.argv[3]))
    elif mode == 'put':
        put(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    elif mode == 'found':
        found(sys.argv[2], sys.argv[3], sys.argv[4])
    elif mode == 'get':
        get(sys.argv[2])
    else:
        fail('io', 'unknown mode')
except Stop:
    sys.exit(4)
except OSError as e:
    fail(CODES.get(e.errno, 'io'), e.strerror or '')
`;
