//! TODO(owner): index
