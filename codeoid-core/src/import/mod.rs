//! TODO(owner): import
