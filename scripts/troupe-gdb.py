# troupe's gdb commands. In gdb:  source scripts/troupe-gdb.py
#
#   info troupe-threads   every user thread (id, name, state, what it waits
#                         on) and every OS thread blocked on a troupe
#                         primitive, from the runtime's own registry
#   troupe-bt N           the backtrace of parked user thread N, unwound
#                         from the context it saved when it switched out
#
# Works without debug information: the library exports `troupe_debug_layout`
# (core/src/diag/registry.cpp), the registry's address and the offsets of the
# fields read here. troupe-bt needs a live process (it points the selected
# thread's registers at the saved context for one `bt`, then restores them)
# and knows the x86-64 System V context layout of Boost.Context's
# jump_fcontext: mxcsr/x87 word, r12, r13, r14, r15, rbx, rbp, return address.
import gdb

LAYOUT_FIELDS = [
    "version", "fibers_head", "os_threads_head", "reg_next", "id", "name", "state",
    "seq", "kind", "wait_name", "resource", "fctx", "joiner", "home", "tid", "parked_value",
]


def _inferior():
    return gdb.selected_inferior()


def _read(addr, size):
    return bytes(_inferior().read_memory(addr, size))


def _u32(addr):
    return int.from_bytes(_read(addr, 4), "little")


def _u64(addr):
    return int.from_bytes(_read(addr, 8), "little")


def _cstr(addr, limit=200):
    if addr == 0:
        return None
    out = bytearray()
    while len(out) < limit:
        b = _read(addr + len(out), 1)
        if b == b"\0":
            break
        out += b
    return out.decode("utf-8", "replace")


def _layout():
    sym = gdb.lookup_global_symbol("troupe_debug_layout") or gdb.lookup_static_symbol(
        "troupe_debug_layout")
    if sym is not None:
        base = int(sym.value().address)
    else:
        # No debug information: the ELF symbol table still has it.
        try:
            base = int(gdb.parse_and_eval("(long)&troupe_debug_layout"))
        except gdb.error:
            raise gdb.GdbError("troupe: no troupe_debug_layout in this program "
                               "(not linked with troupe core, or not started yet)")
    layout = {}
    for i, f in enumerate(LAYOUT_FIELDS):
        layout[f] = _u32(base + 4 * i)
    if layout["version"] != 1:
        raise gdb.GdbError("troupe: unknown debug layout version %d" % layout["version"])
    # The registry pointer follows the 16 uint32 fields, 8-aligned.
    layout["registry"] = _u64(base + 4 * len(LAYOUT_FIELDS))
    return layout


def _contexts(L, head_offset):
    c = _u64(L["registry"] + head_offset)
    seen = 0
    while c and seen < 1000000:
        yield c
        c = _u64(c + L["reg_next"])
        seen += 1


def _describe(L, c, user):
    ident = _u64(c + L["id"])
    name = _cstr(_u64(c + L["name"]))
    text = ("thread %d" if user else "OS thread %d") % ident
    if name:
        text += " '%s'" % name
    if not user:
        text += " (tid %d)" % _u64(c + L["tid"])
    return text


def _state(L, c, user):
    if user and _u64(c + L["joiner"]) == 1:
        return "finished (not joined yet)"
    seq = _u32(c + L["seq"])
    kind = _cstr(_u64(c + L["kind"])) if seq & 1 else None
    parked = _u32(c + L["state"]) == L["parked_value"]
    if kind:
        what = kind
        rname = _cstr(_u64(c + L["wait_name"]))
        if rname:
            what += " '%s'" % rname
        what += " (0x%x)" % _u64(c + L["resource"])
        return "waiting on " + what + ("" if parked else " (not parked yet, or woken)")
    if parked:
        return "parked (no wait recorded)"
    return "running or ready"


def _fibers(L):
    return list(_contexts(L, L["fibers_head"]))


class InfoTroupeThreads(gdb.Command):
    """List troupe user threads and OS threads blocked on troupe primitives."""

    def __init__(self):
        super().__init__("info troupe-threads", gdb.COMMAND_STATUS)

    def invoke(self, arg, from_tty):
        L = _layout()
        fibers = sorted(_fibers(L), key=lambda c: _u64(c + L["id"]))
        gdb.write("user threads (%d):\n" % len(fibers))
        for c in fibers:
            gdb.write("  %s: %s\n" % (_describe(L, c, True), _state(L, c, True)))
        blocked = [c for c in _contexts(L, L["os_threads_head"]) if _u32(c + L["seq"]) & 1]
        gdb.write("OS threads blocked on troupe primitives (%d):\n" % len(blocked))
        for c in blocked:
            gdb.write("  %s: %s\n" % (_describe(L, c, False), _state(L, c, False)))


REGS = ["r12", "r13", "r14", "r15", "rbx", "rbp"]


class TroupeBt(gdb.Command):
    """troupe-bt N: backtrace of parked (or ready) troupe user thread N."""

    def __init__(self):
        super().__init__("troupe-bt", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        if gdb.lookup_type("long").sizeof != 8 or "x86-64" not in gdb.selected_frame().architecture().name():
            raise gdb.GdbError("troupe-bt: only x86-64 is supported")
        try:
            want = int(arg.strip())
        except ValueError:
            raise gdb.GdbError("usage: troupe-bt N (a user thread id from info troupe-threads)")
        L = _layout()
        target = None
        for c in _fibers(L):
            if _u64(c + L["id"]) == want:
                target = c
                break
        if target is None:
            raise gdb.GdbError("troupe-bt: no user thread %d" % want)
        if _u32(target + L["state"]) != L["parked_value"] and not (_u32(target + L["seq"]) & 1):
            gdb.write("troupe-bt: thread %d may be running: its saved context may be stale\n" % want)
        fctx = _u64(target + L["fctx"])
        if fctx == 0:
            raise gdb.GdbError("troupe-bt: thread %d has no saved context" % want)
        gdb.write("%s: %s\n" % (_describe(L, target, True), _state(L, target, True)))
        saved = {r: int(gdb.parse_and_eval("$" + r)) for r in REGS + ["rsp", "rip"]}
        gdb.execute("select-frame 0", to_string=True)
        try:
            for i, r in enumerate(REGS):
                gdb.execute("set $%s = %d" % (r, _u64(fctx + 8 * (i + 1))), to_string=True)
            gdb.execute("set $rip = %d" % _u64(fctx + 0x38), to_string=True)
            gdb.execute("set $rsp = %d" % (fctx + 0x40), to_string=True)
            gdb.execute("bt")
        finally:
            gdb.execute("select-frame 0", to_string=True)
            for r, v in saved.items():
                gdb.execute("set $%s = %d" % (r, v), to_string=True)


InfoTroupeThreads()
TroupeBt()
