//! TODO(owner): rotate
