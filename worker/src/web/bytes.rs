//! The browser's byte types as the loader's generic bytes: a `Uint8Array` is a
//! [`View`](crate::loader::slices::View), a posted `ArrayBuffer` a
//! [`Posted`](crate::loader::refill::Posted). Each read copies bytes between JS memory and the
//! wasm memory once.

use crate::loader::refill::Posted;
use crate::loader::slices::View;
use js_sys::{ArrayBuffer, Uint8Array};

impl View for Uint8Array {
    fn length(&self) -> u32 {
        Uint8Array::length(self)
    }

    fn sub(&self, at: u32, to: u32) -> Self {
        self.subarray(at, to)
    }

    fn copy_to(&self, into: &mut [u8]) {
        Uint8Array::copy_to(self, into);
    }
}

impl Posted for ArrayBuffer {
    fn byte_length(&self) -> u32 {
        ArrayBuffer::byte_length(self)
    }

    fn copy_out(&self, at: u32, len: u32) -> Self {
        self.slice_with_end(at, at + len)
    }

    fn copy_into(&self, at: u32, len: u32, into: &Self) {
        Uint8Array::new(into).set(&Uint8Array::new_with_byte_offset_and_length(self, at, len), 0);
    }
}
