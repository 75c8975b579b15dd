//! eBPF without a BPF toolchain: a tiny assembler and the bpf(2) calls of benchlab's
//! programs, the XDP generator's ([`xdp`](crate::traffic::xdp)) and the latency probes' stamps
//! at the DUT ([`egress`](crate::traffic::latency::egress),
//! [`ingress`](crate::traffic::latency::ingress)). A compiled object would need a BPF
//! compiler on every machine that builds benchlab; the programs are short, and the kernel's
//! verifier checks every access they make.
// FFI: the bpf(2) system call has no wrapper in std or libc.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::AtomicU64;

/// `BPF_MAP_CREATE`.
const BPF_MAP_CREATE: libc::c_long = 0;
/// `BPF_PROG_LOAD`.
const BPF_PROG_LOAD: libc::c_long = 5;
/// `BPF_MAP_UPDATE_ELEM`.
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
/// `BPF_MAP_TYPE_ARRAY`.
const BPF_MAP_TYPE_ARRAY: u32 = 2;
/// `BPF_MAP_TYPE_DEVMAP`.
const BPF_MAP_TYPE_DEVMAP: u32 = 14;
/// A map this process can `mmap`.
const BPF_F_MMAPABLE: u32 = 1 << 10;
/// `bpf_map_lookup_elem`.
const MAP_LOOKUP_ELEM: i32 = 1;

/// Size of `union bpf_attr` we pass: larger than any command's fields, zero-filled tail.
pub(crate) const ATTR_LEN: usize = 160;

/// One BPF instruction: opcode, registers (dst low nibble, src high nibble), offset, immediate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Insn {
    pub(crate) code: u8,
    regs: u8,
    pub(crate) off: i16,
    pub(crate) imm: i32,
}

impl Insn {
    pub(crate) fn new(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
        Insn {
            code,
            regs: dst | (src << 4),
            off,
            imm,
        }
    }

    /// The 8 bytes the kernel reads (`struct bpf_insn`, host byte order).
    pub(crate) fn encode(self) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[0] = self.code;
        b[1] = self.regs;
        b[2..4].copy_from_slice(&self.off.to_ne_bytes());
        b[4..8].copy_from_slice(&self.imm.to_ne_bytes());
        b
    }
}

// Registers. r1-r5 are arguments (clobbered by calls), r6-r9 survive calls, r10 is the frame pointer.
pub(crate) const R0: u8 = 0;
pub(crate) const R1: u8 = 1;
pub(crate) const R2: u8 = 2;
pub(crate) const R3: u8 = 3;
pub(crate) const R4: u8 = 4;
pub(crate) const R5: u8 = 5;
pub(crate) const R6: u8 = 6;
pub(crate) const R7: u8 = 7;
pub(crate) const R8: u8 = 8;
pub(crate) const R9: u8 = 9;
pub(crate) const R10: u8 = 10;

/// `BPF_ADD | BPF_FETCH`: add, and fetch the old value (Linux 5.12+).
pub(crate) const ATOMIC_FETCH_ADD: i32 = 0x01;
/// `BPF_XCHG` (with `BPF_FETCH`): exchange (Linux 5.12+).
pub(crate) const ATOMIC_XCHG: i32 = 0xe1;

/// Memory access sizes (the `BPF_SIZE` bits).
#[derive(Clone, Copy)]
pub(crate) enum Size {
    W = 0x00,
    B = 0x10,
    H = 0x08,
    Dw = 0x18,
}

/// A tiny assembler: instructions plus jumps to labels resolved at the end.
#[derive(Default)]
pub(crate) struct Asm {
    pub(crate) insns: Vec<Insn>,
    fixups: Vec<(usize, usize)>,
    labels: Vec<Option<usize>>,
}

impl Asm {
    pub(crate) fn emit(&mut self, i: Insn) {
        self.insns.push(i);
    }
    pub(crate) fn label(&mut self) -> usize {
        self.labels.push(None);
        self.labels.len() - 1
    }
    pub(crate) fn bind(&mut self, l: usize) {
        self.labels[l] = Some(self.insns.len());
    }
    /// `dst = *(size *)(src + off)` (BPF_LDX | BPF_MEM).
    pub(crate) fn ldx(&mut self, s: Size, dst: u8, src: u8, off: i16) {
        self.emit(Insn::new(0x61 | s as u8, dst, src, off, 0));
    }
    /// `*(size *)(dst + off) = src` (BPF_STX | BPF_MEM).
    pub(crate) fn stx(&mut self, s: Size, dst: u8, off: i16, src: u8) {
        self.emit(Insn::new(0x63 | s as u8, dst, src, off, 0));
    }
    /// An atomic operation on `*(size *)(dst + off)` with `src` (BPF_STX | BPF_ATOMIC): `op`
    /// is [`ATOMIC_FETCH_ADD`] or [`ATOMIC_XCHG`], both leaving the word's old value in `src`.
    pub(crate) fn atomic(&mut self, s: Size, dst: u8, off: i16, src: u8, op: i32) {
        self.emit(Insn::new(0xc3 | s as u8, dst, src, off, op));
    }
    /// `*(size *)(dst + off) = imm` (BPF_ST | BPF_MEM).
    pub(crate) fn st(&mut self, s: Size, dst: u8, off: i16, imm: i32) {
        self.emit(Insn::new(0x62 | s as u8, dst, 0, off, imm));
    }
    /// 64-bit ALU with an immediate: `op` is BPF_ADD 0x00, BPF_MUL 0x20, BPF_AND 0x50,
    /// BPF_LSH 0x60, BPF_RSH 0x70, BPF_XOR 0xa0, BPF_MOV 0xb0.
    pub(crate) fn alu_imm(&mut self, op: u8, dst: u8, imm: i32) {
        self.emit(Insn::new(0x07 | op, dst, 0, 0, imm));
    }
    /// 64-bit ALU with a register: BPF_ADD 0x00, BPF_SUB 0x10, BPF_MOV 0xb0.
    pub(crate) fn alu_reg(&mut self, op: u8, dst: u8, src: u8) {
        self.emit(Insn::new(0x0f | op, dst, src, 0, 0));
    }
    /// 32-bit add of an immediate (wraps at 2^32, zero-extends).
    pub(crate) fn add32_imm(&mut self, dst: u8, imm: u32) {
        self.emit(Insn::new(0x04, dst, 0, 0, imm as i32));
    }
    /// `dst = htobe<bits>(dst)` (BPF_ALU | BPF_END | BPF_TO_BE), upper bits cleared.
    pub(crate) fn bswap_be(&mut self, dst: u8, bits: i32) {
        self.emit(Insn::new(0xdc, dst, 0, 0, bits));
    }
    /// Conditional jump on `dst <op> imm` to a label: BPF_JEQ 0x15, BPF_JNE 0x55.
    pub(crate) fn jmp_imm(&mut self, code: u8, dst: u8, imm: i32, to: usize) {
        self.fixups.push((self.insns.len(), to));
        self.emit(Insn::new(code, dst, 0, 0, imm));
    }
    /// Conditional jump on `dst <op> src`, unsigned, to a label: BPF_JGT 0x2d, BPF_JGE 0x3d,
    /// BPF_JLT 0xad.
    pub(crate) fn jmp_reg(&mut self, code: u8, dst: u8, src: u8, to: usize) {
        self.fixups.push((self.insns.len(), to));
        self.emit(Insn::new(code, dst, src, 0, 0));
    }
    pub(crate) fn call(&mut self, helper: i32) {
        self.emit(Insn::new(0x85, 0, 0, 0, helper));
    }
    pub(crate) fn exit(&mut self) {
        self.emit(Insn::new(0x95, 0, 0, 0, 0));
    }
    /// `dst = map` (BPF_LD | BPF_IMM | BPF_DW with BPF_PSEUDO_MAP_FD: two slots).
    pub(crate) fn ld_map(&mut self, dst: u8, map_fd: i32) {
        self.emit(Insn::new(0x18, dst, 1, 0, map_fd));
        self.emit(Insn::new(0, 0, 0, 0, 0));
    }
    /// `r0 = bpf_map_lookup_elem(map, &(u32)0)`, the one value of an [`array_map`]; to
    /// `missing` when there is none (the verifier wants the check). Uses the stack's last word.
    pub(crate) fn lookup_value(&mut self, map_fd: i32, missing: usize) {
        self.st(Size::W, R10, -4, 0);
        self.ld_map(R1, map_fd);
        self.alu_reg(0xb0, R2, R10);
        self.alu_imm(0x00, R2, -4);
        self.call(MAP_LOOKUP_ELEM);
        self.jmp_imm(0x15, R0, 0, missing);
    }
    /// `r = fold16(r); r = ~r & 0xffff`, using `tmp`: a one's-complement sum of < 2^32 words.
    pub(crate) fn fold_not(&mut self, r: u8, tmp: u8) {
        for _ in 0..2 {
            self.alu_reg(0xb0, tmp, r);
            self.alu_imm(0x70, tmp, 16);
            self.alu_imm(0x50, r, 0xffff);
            self.alu_reg(0x00, r, tmp);
        }
        self.alu_imm(0xa0, r, 0xffff);
    }
    /// Jump to a label (BPF_JA).
    pub(crate) fn ja(&mut self, to: usize) {
        self.fixups.push((self.insns.len(), to));
        self.emit(Insn::new(0x05, 0, 0, 0, 0));
    }
    /// `dst = imm` for a whole 64-bit immediate (BPF_LD | BPF_IMM | BPF_DW: two slots).
    pub(crate) fn ld_imm64(&mut self, dst: u8, imm: u64) {
        self.emit(Insn::new(0x18, dst, 0, 0, imm as u32 as i32));
        self.emit(Insn::new(0, 0, 0, 0, (imm >> 32) as u32 as i32));
    }
    pub(crate) fn finish(mut self) -> Vec<Insn> {
        for (at, label) in self.fixups {
            let target = self.labels[label].expect("every label is bound");
            self.insns[at].off = (target as isize - at as isize - 1) as i16;
        }
        self.insns
    }
}

/// bpf(2) with `attr` as its `union bpf_attr`: the command's result (a descriptor, for most).
pub(crate) fn bpf(cmd: libc::c_long, attr: &mut [u8; ATTR_LEN]) -> io::Result<libc::c_long> {
    // SAFETY: attr is a live, writable buffer of ATTR_LEN bytes laid out as `union bpf_attr`;
    // every pointer inside it points to memory the caller keeps alive for the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr.as_mut_ptr(),
            ATTR_LEN as libc::c_uint,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(rc)
}

/// Writes `v` at byte `off` of a `bpf_attr`.
pub(crate) fn put_u32(attr: &mut [u8], off: usize, v: u32) {
    attr[off..off + 4].copy_from_slice(&v.to_ne_bytes());
}

/// Writes `v` at byte `off` of a `bpf_attr`.
pub(crate) fn put_u64(attr: &mut [u8], off: usize, v: u64) {
    attr[off..off + 8].copy_from_slice(&v.to_ne_bytes());
}

/// The descriptor a bpf command returned, owned.
pub(crate) fn fd_from(rc: libc::c_long) -> OwnedFd {
    // SAFETY: the bpf commands used here return a new file descriptor that nobody else owns.
    unsafe { OwnedFd::from_raw_fd(rc as i32) }
}

/// A new array map of one value `len` bytes long (a multiple of 8), which [`Mapped`] maps
/// into this process: a program's state, shared with its threads without a system call.
pub(crate) fn array_map(len: usize, name: &[u8; 8]) -> io::Result<OwnedFd> {
    let mut attr = [0u8; ATTR_LEN];
    put_u32(&mut attr, 0, BPF_MAP_TYPE_ARRAY);
    put_u32(&mut attr, 4, 4); // key: u32 index
    put_u32(&mut attr, 8, len as u32);
    put_u32(&mut attr, 12, 1); // one entry
    put_u32(&mut attr, 16, BPF_F_MMAPABLE);
    attr[28..36].copy_from_slice(name);
    bpf(BPF_MAP_CREATE, &mut attr).map(fd_from)
}

/// A device map of one entry, interface `ifindex` with program `prog` (loaded for
/// [`BPF_XDP_DEVMAP`]), which runs on each frame redirected through the map as the kernel hands
/// its batch to the interface; must be made in the interface's namespace.
pub(crate) fn devmap(ifindex: u32, prog: &OwnedFd) -> io::Result<OwnedFd> {
    let mut attr = [0u8; ATTR_LEN];
    put_u32(&mut attr, 0, BPF_MAP_TYPE_DEVMAP);
    put_u32(&mut attr, 4, 4); // key: u32 index
    put_u32(&mut attr, 8, 8); // struct bpf_devmap_val: ifindex, program fd
    put_u32(&mut attr, 12, 1);
    attr[28..36].copy_from_slice(b"bl_devmp");
    let map = bpf(BPF_MAP_CREATE, &mut attr).map(fd_from)?;
    let key = 0u32;
    let value = [ifindex.to_ne_bytes(), prog.as_raw_fd().to_ne_bytes()].concat();
    let mut attr = [0u8; ATTR_LEN];
    put_u32(&mut attr, 0, map.as_raw_fd() as u32);
    put_u64(&mut attr, 8, std::ptr::from_ref(&key) as u64);
    put_u64(&mut attr, 16, value.as_ptr() as u64);
    bpf(BPF_MAP_UPDATE_ELEM, &mut attr)?;
    Ok(map)
}

/// `BPF_XDP_DEVMAP`: an XDP program run by a device map ([`devmap`]).
pub(crate) const BPF_XDP_DEVMAP: u32 = 33;

/// An [`array_map`]'s value mapped into this process, read and written one aligned 8-byte
/// word at a time, as the program stores them.
#[derive(Debug)]
pub(crate) struct Mapped {
    ptr: std::ptr::NonNull<u8>,
    /// The value's length, bytes.
    value: usize,
    /// The mapping's, whole pages.
    len: usize,
}

// SAFETY: the mapping is only touched through `AtomicU64`s (see `Mapped::word`), so sharing it
// between threads is as safe as sharing the atomics.
unsafe impl Send for Mapped {}
// SAFETY: as for Send.
unsafe impl Sync for Mapped {}

impl Mapped {
    /// Maps the `value`-byte value of `map`, an [`array_map`].
    pub(crate) fn new(map: &OwnedFd, value: usize) -> io::Result<Mapped> {
        // SAFETY: sysconf has no preconditions.
        let page = (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(1) as usize;
        let len = value.div_ceil(page) * page;
        // SAFETY: a fresh shared mapping of the map's fd; the kernel checks the length and
        // the map's flags, and the result is checked before use.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                map.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = std::ptr::NonNull::new(ptr.cast()).ok_or_else(io::Error::last_os_error)?;
        Ok(Mapped { ptr, value, len })
    }

    /// The u64 word at byte offset `off` of the value.
    pub(crate) fn word(&self, off: usize) -> &AtomicU64 {
        assert!(
            off % 8 == 0 && off + 8 <= self.value,
            "a u64 word of the value"
        );
        // SAFETY: the mapping is page-aligned and at least `value` bytes long, so `off` is an
        // aligned u64 inside it, live as long as `self`; the program writes it with plain
        // aligned 8-byte stores, which atomic loads and stores of the same word tolerate.
        unsafe { &*self.ptr.as_ptr().add(off).cast::<AtomicU64>() }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`, which nothing uses any more.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// The program's bytes, as `BPF_PROG_LOAD` takes them.
pub(crate) fn encode(program: &[Insn]) -> Vec<u8> {
    program.iter().flat_map(|i| i.encode()).collect()
}

/// Loads `code` as a program of `prog_type` (with its expected attach type, 0 but for
/// [`BPF_XDP_DEVMAP`]) named `name`; a rejection is loaded again with the verifier's log, whose
/// end the error then holds, naming `what`.
pub(crate) fn load(
    (prog_type, attach): (u32, u32),
    code: &[u8],
    name: &[u8; 8],
    what: &str,
) -> io::Result<OwnedFd> {
    load_once((prog_type, attach), code, name, false).or_else(|_| {
        load_once((prog_type, attach), code, name, true)
            .map_err(|e| io::Error::new(e.kind(), format!("loading {what}: {e}")))
    })
}

fn load_once(
    (prog_type, attach): (u32, u32),
    code: &[u8],
    name: &[u8; 8],
    log: bool,
) -> io::Result<OwnedFd> {
    let license = b"BSD\0";
    let mut log_buf = vec![0u8; if log { 1 << 16 } else { 0 }];
    let mut attr = [0u8; ATTR_LEN];
    put_u32(&mut attr, 0, prog_type);
    put_u32(&mut attr, 4, (code.len() / 8) as u32);
    put_u64(&mut attr, 8, code.as_ptr() as u64);
    put_u64(&mut attr, 16, license.as_ptr() as u64);
    if log {
        put_u32(&mut attr, 24, 1);
        put_u32(&mut attr, 28, log_buf.len() as u32);
        put_u64(&mut attr, 32, log_buf.as_mut_ptr() as u64);
    }
    attr[48..56].copy_from_slice(name);
    put_u32(&mut attr, 68, attach);
    match bpf(BPF_PROG_LOAD, &mut attr) {
        Ok(fd) => Ok(fd_from(fd)),
        Err(e) if log && e.raw_os_error() != Some(libc::EPERM) => {
            let text = String::from_utf8_lossy(&log_buf);
            let text = text.trim_end_matches('\0').trim();
            let tail: Vec<&str> = text.lines().rev().take(3).collect();
            Err(io::Error::other(format!(
                "the verifier rejected it ({e}): {}",
                tail.join(" | ")
            )))
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_encode_like_struct_bpf_insn() {
        // r1 = *(u32 *)(r2 - 4): opcode 0x61, dst 1 | src 2 << 4, off -4, imm 0.
        let mut a = Asm::default();
        a.ldx(Size::W, R1, R2, -4);
        assert_eq!(a.insns[0].encode(), [0x61, 0x21, 0xfc, 0xff, 0, 0, 0, 0]);
    }

    #[test]
    fn a_64_bit_immediate_takes_two_slots_low_half_first() {
        let mut a = Asm::default();
        a.ld_imm64(R1, 37_000_000_000);
        let p = a.finish();
        let half = |i: usize| u64::from(p[i].imm as u32);
        assert_eq!((p[0].code, p.len()), (0x18, 2));
        assert_eq!(half(0) | half(1) << 32, 37_000_000_000);
    }
}
